#!/usr/bin/env python3
"""fp8lab_torch (python/) against the fp8lab binary, on a fresh tiny run trained here:

  1. cross-entropy: fp8lab_torch.evaluate of load(run, mixed=True) equals `fp8lab eval`'s to a
     relative 1e-5 (the fp32 model is checked to differ, by bf16's rounding, and to stay close);
  2. greedy text: each token `fp8lab sample --temperature 0` picks is the mixed model's argmax
     (or within 1e-3 of it: a near tie);
  3. the forward printed in docs/checkpoint-format.md, run as written, gives the package's logits;
  4. the package's own safetensors reader gives the `safetensors` package's tensors, bit for bit
     (when that package is installed);
  5. `fp8lab export --format hf` writes the checkpoint's tensors under their names, metadata
     format "pt", a config.json of the model config and the package's Python files;
  6. bad input is an exception naming the value (Python) or exit 2 with nothing written (CLI).

Run by CTest (fp8lab_torch_vs_eval; exits 77, a skip, without torch) and on the GPU machine with
PyTorch 2.11 and the real safetensors package:
  python3 tests/reference/fp8lab_torch_check.py --fp8lab FP8LAB --workdir DIR \\
      --device cuda --require-safetensors
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import types

try:
    import torch
except ImportError:
    print("fp8lab_torch_check: SKIP: torch is not installed (Debian: python3-torch)")
    sys.exit(77)

from fp8lab_fixture import REPO, Fp8labRun, argmax_agreement, run  # noqa: E402

import fp8lab_torch  # noqa: E402  (python/, put on the path by fp8lab_fixture)
from fp8lab_torch import safetensors_io  # noqa: E402

failures = []


def check(ok, message):
    print(f"  {'ok  ' if ok else 'FAIL'} {message}", flush=True)
    if not ok:
        failures.append(message)


def expect_raises(exc_type, fragment, fn, what):
    try:
        fn()
    except exc_type as e:
        check(fragment in str(e), f"{what}: {exc_type.__name__} naming '{fragment}' ({e})")
        return
    check(False, f"{what}: no {exc_type.__name__}")


def check_cross_entropy(r, device):
    ref = r.eval_json()
    mixed = fp8lab_torch.load(r.run_dir, mixed=True, device=device)
    got = fp8lab_torch.evaluate(mixed, r.data, batch_rows=4)
    rel = abs(got["ce"] - ref["ce_nats"]) / ref["ce_nats"]
    print(f"[measured] CE fp8lab eval {ref['ce_nats']:.9f}, fp8lab_torch mixed {got['ce']:.9f}: "
          f"relative {rel:.3g}")
    check(rel <= 1e-5, f"mixed CE within 1e-5 of fp8lab eval's (relative {rel:.3g})")
    check(got["targets_counted"] == ref["targets_counted"] and got["batches"] == ref["batches"],
          f"the same targets ({got['targets_counted']}) in the same batches ({got['batches']})")
    fp32 = fp8lab_torch.load(r.run_dir, device=device)
    rel32 = abs(fp8lab_torch.evaluate(fp32, r.data, batch_rows=4)["ce"] - ref["ce_nats"]) / \
        ref["ce_nats"]
    print(f"[measured] CE of the fp32 model: relative {rel32:.3g} from fp8lab eval's (bf16)")
    check(0 < rel32 < 1e-2, "the fp32 model's CE is close to fp8lab's but not bf16's bits")
    return mixed, fp32


def check_greedy(r, mixed):
    prompt = "the lord"
    picks = r.greedy(prompt, 40)
    with torch.no_grad():
        exact, bad = argmax_agreement(lambda idx: mixed(idx.to(mixed.wte.weight.device)).cpu(),
                                      list(prompt.encode()), picks, near_tie=1e-3)
    print(f"[measured] greedy: {exact} of {len(picks)} fp8lab picks are the argmax exactly")
    check(not bad, f"fp8lab sample's greedy picks are the mixed model's argmax {bad[:2]}")


def docs_forward_source():
    with open(os.path.join(REPO, "docs", "checkpoint-format.md")) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if "def forward(cfg, w, idx)" in b)


def install_safetensors_shim():
    """A stand-in `safetensors.safe_open` over fp8lab_torch's reader, for machines without the
    package (the snippet is written against the real one)."""
    class SafeOpen:
        def __init__(self, path, framework):
            assert framework == "pt"
            self.tensors, self.meta = safetensors_io._read_plain(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def metadata(self):
            return self.meta

        def keys(self):
            return list(self.tensors)

        def get_tensor(self, name):
            return self.tensors[name]

    sys.modules["safetensors"] = types.SimpleNamespace(safe_open=SafeOpen)


def check_docs_forward(r, fp32):
    source = docs_forward_source()
    shim = not safetensors_io.using_safetensors_package()
    if shim:
        install_safetensors_shim()
    scope = {}
    exec(compile(source, "docs/checkpoint-format.md", "exec"), scope)
    cfg, w = scope["load"](r.checkpoint_dir())
    if shim:
        del sys.modules["safetensors"]
    idx = torch.randint(0, fp32.cfg["vocab_size"], (2, fp32.cfg["seq_len"]))
    with torch.no_grad():
        want = fp32.cpu()(idx)
        got = scope["forward"](cfg, w, idx)
    rel = float((got - want).norm() / want.norm())
    print(f"[measured] the documented forward vs fp8lab_torch: relative {rel:.3g}"
          f"{' (safetensors stand-in)' if shim else ''}")
    check(rel <= 1e-5, "docs/checkpoint-format.md's forward runs as written and gives the logits")


def check_reader(r, require):
    path = os.path.join(r.checkpoint_dir(), "model.safetensors")
    own, own_meta = safetensors_io._read_plain(path)
    if not safetensors_io.using_safetensors_package():
        if require:
            check(False, "the safetensors package is installed (--require-safetensors)")
        print("  (no safetensors package: the package's own reader served every load)")
        return
    lib, lib_meta = safetensors_io.read_safetensors(path)
    same = own.keys() == lib.keys() and own_meta == lib_meta and all(
        own[k].dtype == lib[k].dtype and torch.equal(own[k], lib[k]) for k in own)
    check(same, "the own reader gives the safetensors package's tensors and metadata")


def check_export(r):
    out = os.path.join(r.workdir, "hf")
    shutil.rmtree(out, ignore_errors=True)
    run([r.fp8lab, "export", "--format", "hf", "--checkpoint", r.run_dir, "--out", out])
    tensors, meta = safetensors_io.read_safetensors(os.path.join(out, "model.safetensors"))
    _, weights, ckpt_meta = fp8lab_torch.load_checkpoint(r.run_dir)
    check(meta.get("format") == "pt", "exported weights carry metadata format 'pt'")
    check(tensors.keys() == weights.keys() and
          all(torch.equal(tensors[k], weights[k]) for k in weights),
          "exported tensors are the checkpoint's, bit for bit, under its names")
    with open(os.path.join(out, "config.json")) as f:
        config = json.load(f)
    model_cfg = ckpt_meta["config"]["model"]
    check(all(config[k] == v for k, v in model_cfg.items()) and
          config["auto_map"]["AutoModelForCausalLM"] == "modeling_fp8lab.Fp8labGPTForCausalLM"
          and config["fp8lab"]["params_sha256"] == ckpt_meta["params_sha256"],
          "config.json holds the model config, the auto_map and the weights' hash")
    for name, source in (("modeling_fp8lab.py", "hf_modeling.py"), ("model.py", "model.py")):
        with open(os.path.join(out, name)) as a, \
                open(os.path.join(REPO, "python", "fp8lab_torch", source)) as b:
            check(a.read() == b.read(), f"{name} is python/fp8lab_torch/{source}")
    return out


def check_bad_input(r, export_dir):
    ckpt = r.checkpoint_dir()
    other = os.path.join(r.workdir, "other")
    run([r.fp8lab, "train", "--preset", "tiny", "--backend", "cpu", "--steps", "1",
         "--set", "model.d_model=32", "--set", "model.n_layers=1", "--set", "model.n_heads=2",
         "--set", "model.seq_len=16", "--set", "model.vocab_size=97", "--no-progress",
         "--out", other])
    swapped = os.path.join(r.workdir, "swapped")
    shutil.rmtree(swapped, ignore_errors=True)
    shutil.copytree(ckpt, swapped)
    other_ckpt = fp8lab_torch.resolve_checkpoint(other)
    shutil.copy(os.path.join(other_ckpt, "model.safetensors"), swapped)
    expect_raises(fp8lab_torch.CheckpointError, "vocab_size 97 (meta.json: 256)",
                  lambda: fp8lab_torch.load(swapped, verify=False),
                  "weights of another model config")
    expect_raises(fp8lab_torch.CheckpointError, "corrupt", lambda: fp8lab_torch.load(swapped),
                  "a weights file meta.json does not know")
    expect_raises(fp8lab_torch.CheckpointError, "d_model 64 (expected: 128)",
                  lambda: fp8lab_torch.load(ckpt, expect_config={**r_model(r), "d_model": 128}),
                  "expect_config naming the differing field")
    expect_raises(fp8lab_torch.CheckpointError, "does not exist",
                  lambda: fp8lab_torch.load(os.path.join(r.workdir, "nowhere")), "a missing path")
    truncated = os.path.join(r.workdir, "truncated.safetensors")
    with open(os.path.join(ckpt, "model.safetensors"), "rb") as f, open(truncated, "wb") as g:
        g.write(f.read()[:-100])
    expect_raises(safetensors_io.SafetensorsError, "does not fit offsets",
                  lambda: safetensors_io._read_plain(truncated), "a truncated file (own reader)")
    for args, fragment in (
            (["--checkpoint", swapped, "--out", os.path.join(r.workdir, "x")],
             "holds a model of another config"),
            (["--checkpoint", r.run_dir, "--out", export_dir], "is not an empty directory")):
        p = subprocess.run([r.fp8lab, "export", "--format", "hf", *args],
                           capture_output=True, text=True)
        check(p.returncode == 2 and fragment in p.stderr and
              not os.path.exists(os.path.join(r.workdir, "x")),
              f"export {args[1]}: exit 2 naming '{fragment}', nothing written ({p.returncode})")


def r_model(r):
    return fp8lab_torch.load_checkpoint(r.run_dir)[2]["config"]["model"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fp8lab", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--device", default="cpu", help="where fp8lab_torch runs (cpu or cuda)")
    p.add_argument("--require-safetensors", action="store_true",
                   help="fail unless the safetensors package is installed (the GPU machine)")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    print(f"fp8lab_torch_check: torch {torch.__version__}, device {args.device}, safetensors "
          f"package {'yes' if safetensors_io.using_safetensors_package() else 'no'}")
    r = Fp8labRun(args.fp8lab, args.workdir)
    mixed, fp32 = check_cross_entropy(r, args.device)
    check_greedy(r, mixed)
    check_docs_forward(r, fp32)
    check_reader(r, args.require_safetensors)
    check_bad_input(r, check_export(r))
    print(f"fp8lab_torch_check: {'PASS' if not failures else 'FAIL'} "
          f"({len(failures)} failed)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
