// The buffers one micro-batch needs (private to src/model/). Sizes are fixed at construction,
// so a backend sees every activation allocation up front and can plan them.
#pragma once

#include "fp8lab/model.hpp"

#include <memory>
#include <vector>

namespace fp8lab {

// A buffer is kept per block only when the backward reads it and does not rebuild it. The input
// of an FP8 linear is not read (its backward uses the FP8 copy the linear saved), so ln1 (into an
// FP8 qkv), ln2 (into an FP8 fc) and gelu (into an FP8 proj) are then empty here and the forward
// writes the shared buffers instead; that is where FP8 saves activation memory. Pointwise
// recompute (PrecisionConfig::pointwise_recompute) empties the rest of ln1, ln2 and gelu too: the
// forward writes them into the shared buffers and the backward rebuilds each one there (ln1 and
// ln2 from the kept residual stream, gelu from the kept fc) in the block's backward, before the
// first op that reads it.
struct GptModel::Block {
  Buffer ln1, rstd1, att, lse, ln2, rstd2;
  Buffer qkv;       // per block without qkv recompute; empty with it (qkv_shared instead)
  Buffer fc, gelu;  // per block without MLP recompute; empty with it (shared buffers instead)
  // Residual recompute: attn.proj's output, kept for the backward's rebuild of the sum after the
  // attention branch (resid_mid_shared); empty without it (branch_out instead).
  Buffer attn_out;
  std::unique_ptr<LinearContext> qkv_ctx, attn_proj_ctx, fc_ctx, mlp_proj_ctx;
};

// Memory plan (gpt_model.cpp). Forward-only buffers share memory with backward-only scratch, and
// each pair below never holds two live values at once:
//  - branch_out = d_branch: a branch's output is read by the add + norm right after it, in the
//    forward; d_branch is written first by ln_f's backward.
//  - d_lnf = d_ln: the loss writes d_lnf, ln_f's backward reads it, before any block's backward.
//  - ln_shared = lnf: each ln in ln_shared is read by its linear's forward before ln_f's norm
//    (the forward's last op) writes lnf, and lnf is dead once the loss has read it, so through
//    the whole backward ln_shared may hold a recomputed ln1 or ln2 (pointwise recompute; also
//    ln2 for the MLP recompute). Not d_ln: a bf16 fc or qkv backward reads its x (the ln) while
//    it writes its dX into d_ln.
//  - gelu_shared = d_mlp only when no backward reads gelu: an FP8 mlp.proj without MLP
//    recompute. With MLP recompute, or pointwise recompute of a bf16 proj's gelu, the backward
//    rebuilds gelu and proj's backward reads it while it writes its dX into d_mlp: gelu_shared is
//    then a buffer of its own (still one for all blocks).
//  - d_att, d_qkv inside d_mlp (below).
// Lent memory (IdleLoan in gpt_forward.cpp) is never ln_shared, gelu_shared, qkv_shared or
// resid_mid_shared: no workspace can land on a recomputed value still to be read.
struct GptModel::Activations {
  Buffer tokens, targets;     // i32 [M]
  std::vector<Buffer> resid;  // f32 [M, D]: resid[2l] enters block l's attention,
                              // resid[2l+1] its MLP, resid[2L] the final norm
  // Residual recompute (PrecisionConfig::residual_recompute): resid[2l+1] is empty and the sum
  // lives here, written by block l's forward and read by its next add, then rebuilt by block
  // l's backward (resid[2l] + its attn_out: the same add, the same bits) for ln2's backward.
  Buffer resid_mid_shared;  // f32 [M, D]
  std::vector<Block> blocks;
  Buffer fc_shared, gelu_shared;  // act [M, 4D]: fc with MLP recompute; gelu when not kept
  Buffer qkv_shared;              // act [M, 3D]: q | k | v with qkv recompute
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
  // the backward's MLP recompute, so each block keeps its own), then per block the dY of the
  // same four. Each slot has one producer per step, so zeroing them all once per forward is
  // all that deferred slots need (AmaxSlot::deferred).
  static constexpr int kSlotsPerBlock = 4;
  Buffer amax_slots;
  // Pointwise recompute: which of ln1, ln2 (into ln_shared) and gelu (into gelu_shared) the
  // backward rebuilds before the first op that reads it. Under qkv recompute ln1
  // is always rebuilt: the recomputed qkv forward reads it.
  bool recompute_ln1 = false, recompute_ln2 = false, recompute_gelu = false;
};

}  // namespace fp8lab
