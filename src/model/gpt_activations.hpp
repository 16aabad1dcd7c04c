// The buffers one micro-batch needs (private to src/model/). Sizes are fixed at construction,
// so a backend sees every activation allocation up front and can plan them.
#pragma once

#include "fp8lab/model.hpp"

#include <memory>
#include <vector>

namespace fp8lab {

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
  Buffer fc_shared, gelu_shared;  // act [M, 4D], MLP recompute only
  Buffer branch_out;              // act [M, D]: a block branch's output before the residual add
  Buffer lnf, rstdf;              // final norm output and its rstd
  // backward scratch
  Buffer dresid;                 // f32 [M, D]: gradient of the residual stream
  Buffer d_branch, d_att, d_ln;  // act [M, D]
  Buffer d_qkv;                  // act [M, 3D]
  Buffer d_gelu, d_fc;           // act [M, 4D]
  Buffer d_lnf;                  // act [M, D]: from the loss
};

}  // namespace fp8lab
