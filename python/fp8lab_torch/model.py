"""fp8lab's GPT as a torch.nn.Module, parameter for parameter (docs/checkpoint-format.md).

Token + learned position embedding; pre-norm blocks of RMSNorm (weight only, eps = norm_eps),
causal multi-head attention with a fused qkv weight [3D, D] (rows q | k | v, each split into
n_heads heads of D / n_heads rows) and an output projection, RMSNorm, MLP 4x with tanh-GELU; a
final RMSNorm; the LM head tied to wte. No biases. state_dict keys are the checkpoint's tensor
names.

mixed=True computes as fp8lab's mixed precision does on its CPU backend, so losses agree to
summation order: every activation fp8lab stores in bf16 (the norms', linears', attention's and
GELU's outputs) is rounded to bf16, the linears read bf16 copies of their weights, the residual
stream and the logits stay fp32, and RMSNorm takes its mean of squares in float64. Without it the
model is plain fp32 (or whatever dtype it is moved to).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


def _bf16(t, on):
    """t rounded to bf16 (to nearest even) and back, when `on`."""
    return t.to(torch.bfloat16).to(t.dtype) if on else t


class RMSNorm(nn.Module):
    """y = x * rsqrt(mean(x^2) + eps) * weight (no bias, no mean subtraction)."""

    def __init__(self, dim, eps, mixed=False):
        super().__init__()
        self.eps = eps
        self.mixed = mixed
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if self.mixed:  # fp8lab's normalize_row: the mean of squares in double, rstd in float
            ms = x.double().pow(2).mean(-1, keepdim=True)
            rstd = torch.rsqrt(ms + self.eps).to(x.dtype)
            return _bf16(x * (rstd * self.weight), True)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Linear(nn.Module):
    """A bias-free linear y = x @ weight.T whose GEMM is pluggable: `fn(x, weight)`.

    F.linear by default; the benchmark peer plugs in its FP8 autograd function. Keeping the
    parameter here (and not in nn.Linear) leaves the state_dict names exactly the checkpoint's."""

    def __init__(self, in_features, out_features, fn=None, mixed=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.fn = fn
        self.mixed = mixed

    def forward(self, x):
        if self.fn is not None:
            return self.fn(x, self.weight)
        return _bf16(F.linear(x, _bf16(self.weight, self.mixed)), self.mixed)


def causal_attention(q, k, v, explicit):
    """softmax(q k^T / sqrt(head_dim) + causal mask) v over [B, H, T, hd]; written out when
    `explicit` or when this PyTorch has no scaled_dot_product_attention (before 2.0)."""
    if not explicit and hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


class Attention(nn.Module):
    def __init__(self, d_model, n_heads, explicit, linear_fn=None, mixed=False):
        super().__init__()
        self.n_heads = n_heads
        self.explicit = explicit or mixed
        self.mixed = mixed
        self.qkv = Linear(d_model, 3 * d_model, linear_fn, mixed)
        self.proj = Linear(d_model, d_model, linear_fn, mixed)

    def forward(self, x):
        B, T, D = x.shape
        H = self.n_heads
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.reshape(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        a = _bf16(causal_attention(q, k, v, self.explicit), self.mixed)
        return self.proj(a.transpose(1, 2).reshape(B, T, D))


class Mlp(nn.Module):
    def __init__(self, d_model, linear_fn=None, mixed=False):
        super().__init__()
        self.mixed = mixed
        self.fc = Linear(d_model, 4 * d_model, linear_fn, mixed)
        self.proj = Linear(4 * d_model, d_model, linear_fn, mixed)

    def forward(self, x):
        return self.proj(_bf16(F.gelu(self.fc(x), approximate="tanh"), self.mixed))


class Block(nn.Module):
    def __init__(self, cfg, explicit, attn_linear, mlp_linear, mlp_checkpoint, mixed):
        super().__init__()
        self.ln1 = RMSNorm(cfg["d_model"], cfg["norm_eps"], mixed)
        self.attn = Attention(cfg["d_model"], cfg["n_heads"], explicit, attn_linear, mixed)
        self.ln2 = RMSNorm(cfg["d_model"], cfg["norm_eps"], mixed)
        self.mlp = Mlp(cfg["d_model"], mlp_linear, mixed)
        self.mlp_checkpoint = mlp_checkpoint

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        h = self.ln2(x)
        if self.mlp_checkpoint and torch.is_grad_enabled():
            # fp8lab's --mlp-recompute: keep the MLP's input, recompute fc/gelu/proj in backward.
            m = torch.utils.checkpoint.checkpoint(self.mlp, h, use_reentrant=False)
        else:
            m = self.mlp(h)
        return x + m


def build_gpt(module, cfg, explicit_attention=False, attn_linear=None, mlp_linear=None,
              mlp_checkpoint=False, mixed=False):
    """Gives `module` fp8lab's GPT: cfg, mixed and the submodules wte, wpe, blocks, ln_f, whose
    parameter names are the checkpoint's (FpLabGPT; the transformers wrapper in hf_modeling)."""
    module.cfg = dict(cfg)
    module.mixed = mixed
    module.wte = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
    module.wpe = nn.Embedding(cfg["seq_len"], cfg["d_model"])
    module.blocks = nn.ModuleList(
        Block(cfg, explicit_attention, attn_linear, mlp_linear, mlp_checkpoint, mixed)
        for _ in range(cfg["n_layers"]))
    module.ln_f = RMSNorm(cfg["d_model"], cfg["norm_eps"], mixed)


def gpt_logits(module, idx):
    """The logits [B, T, vocab] of a module built by build_gpt, for idx [B, T] int64."""
    T = idx.shape[1]
    if T > module.cfg["seq_len"]:
        raise ValueError(f"{T} positions exceed the model's context of {module.cfg['seq_len']}")
    pos = torch.arange(T, device=idx.device)
    x = module.wte(idx) + module.wpe(pos)
    for block in module.blocks:
        x = block(x)
    return F.linear(module.ln_f(x), _bf16(module.wte.weight, module.mixed))  # the tied LM head


class FpLabGPT(nn.Module):
    """fp8lab's GPT. cfg: a checkpoint's model_config (vocab_size, d_model, n_layers, n_heads,
    seq_len, norm_eps). explicit_attention: softmax(q k^T / sqrt(hd) + causal mask) v written out
    instead of F.scaled_dot_product_attention (always so before PyTorch 2.0). attn_linear /
    mlp_linear: optional GEMM functions fn(x, w) for the attention and MLP linears (the LM head
    always uses F.linear). mlp_checkpoint: recompute the MLP in backward. mixed: compute as
    fp8lab's mixed precision (see the module docstring).

    forward(idx) gives the logits [B, T, vocab]; forward(idx, targets) the mean cross-entropy."""

    def __init__(self, cfg, explicit_attention=False, attn_linear=None, mlp_linear=None,
                 mlp_checkpoint=False, mixed=False):
        super().__init__()
        build_gpt(self, cfg, explicit_attention, attn_linear, mlp_linear, mlp_checkpoint, mixed)

    def init_weights(self, seed, init_std=0.02):
        """GPT-2 style init (the benchmark peer's weights: values do not matter for speed)."""
        g = torch.Generator(device="cpu").manual_seed(seed)
        proj_std = init_std / math.sqrt(2 * self.cfg["n_layers"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith(("ln1.weight", "ln2.weight")) or name == "ln_f.weight":
                    p.fill_(1.0)
                    continue
                std = init_std
                if name == "wpe.weight":
                    std = 0.5 * init_std
                elif name.endswith(("attn.proj.weight", "mlp.proj.weight")):
                    std = proj_std
                p.copy_(torch.randn(p.shape, generator=g) * std)

    def forward(self, idx, targets=None):
        logits = gpt_logits(self, idx)
        if targets is None:
            return logits
        if logits.dtype != torch.float64:
            logits = logits.float()  # the loss in fp32 from bf16 logits, as fp8lab computes it
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def layout_names(cfg):
    """Parameter names in fp8lab's layout order (ParameterLayout): the order of the flat buffer
    that params_sha256 hashes."""
    names = ["wte.weight", "wpe.weight"]
    for i in range(cfg["n_layers"]):
        p = f"blocks.{i}."
        names += [p + s for s in ("ln1.weight", "attn.qkv.weight", "attn.proj.weight",
                                  "ln2.weight", "mlp.fc.weight", "mlp.proj.weight")]
    return names + ["ln_f.weight"]


def parameter_shapes(cfg):
    """{name: shape} of every parameter of a model config."""
    D, V, T = cfg["d_model"], cfg["vocab_size"], cfg["seq_len"]
    block = {"ln1.weight": (D,), "attn.qkv.weight": (3 * D, D), "attn.proj.weight": (D, D),
             "ln2.weight": (D,), "mlp.fc.weight": (4 * D, D), "mlp.proj.weight": (D, 4 * D)}
    shapes = {"wte.weight": (V, D), "wpe.weight": (T, D), "ln_f.weight": (D,)}
    for i in range(cfg["n_layers"]):
        shapes.update({f"blocks.{i}.{k}": s for k, s in block.items()})
    return shapes
