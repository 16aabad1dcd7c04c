// The buffers one micro-batch needs (private to src/model/). Sizes are fixed at construction,
// so a backend sees every activation allocation up front and can plan them.
#pragma once

#include "fp8lab/model.hpp"

#include <memory>
#include <vector>

namespace fp8lab {

// A buffer is kept per block only when the backward reads it. The input of an FP8 linear is
// not read (its backward uses the FP8 copy the linear saved), so ln1 (into an FP8 qkv), ln2
// (into an FP8 fc) and gelu (into an FP8 proj) are then empty here and the forward writes the
// shared buffers instead; that is where FP8 saves activation memory.
struct GptModel::Block {
  Buffer ln1, rstd1, qkv, att, lse, ln2, rstd2;
  Buffer fc, gelu;  // per block without MLP recompute; empty with it (shared buffers instead)
  std::unique_ptr<LinearContext> qkv_ctx, attn_proj_ctx, fc_ctx, mlp_proj_ctx;
};

struct GptModel::Activations {
  Buffer tokens, targets;     // i32 [M]
  std::vector<Buffer> resid;  // f32 [M, D]: resid[2l] enters block l's attention,
                              // resid[2l+1] its MLP, resid[2L] the final norm
  std::vector<Block> blocks;
  Buffer fc_shared, gelu_shared;  // act [M, 4D], MLP recompute only (gelu also into FP8 proj)
  Buffer ln_shared;               // act [M, D]: ln1/ln2 of blocks that do not keep them
  Buffer branch_out;              // act [M, D]: a block branch's output before the residual add
  Buffer lnf, rstdf;              // final norm output and its rstd
  // backward scratch
  Buffer dresid;                 // f32 [M, D]: gradient of the residual stream
  Buffer d_branch, d_ln;  // act [M, D]
  Buffer d_mlp;           // act [M, 4D]: d(gelu out), then in place d(fc out)
  // The attention half of a block's backward runs after its MLP half is done with d_mlp, so its
  // gradients live in d_mlp's memory (M·D + 3·M·D elements = exactly [M, 4D]):
  TensorView d_att;  // act [M, D], the first M·D elements of d_mlp
  TensorView d_qkv;  // act [M, 3D], the 3·M·D elements after it
  Buffer d_lnf;                  // act [M, D]: from the loss
  // Producer-fused amax slots (GptModel::x_amax, dy_amax), when a block linear is FP8: per
  // block the x of qkv, attn.proj, fc and mlp.proj, in BlockLinear order (fc's is read again by
  // the backward's MLP recompute, so each block keeps its own), then one for every dY (each is
  // used by the very next linear).
  static constexpr int kSlotsPerBlock = 4;
  Buffer amax_slots;
};

}  // namespace fp8lab
