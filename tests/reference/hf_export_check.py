#!/usr/bin/env python3
"""`fp8lab export --format hf` loaded by Hugging Face transformers, on a fresh tiny run trained
here with the fp8lab binary:

  1. AutoModelForCausalLM.from_pretrained(DIR, trust_remote_code=True) loads every weight and its
     logits equal fp8lab_torch's model's (the checkpoint loaded directly), to 1e-6 relative;
  2. with fp8lab_mixed=True its cross-entropy on the held-out shards equals `fp8lab eval`'s to a
     relative 1e-5, and the tokens `fp8lab sample --temperature 0` picks are its argmax (or
     within 1e-3 of it: a near tie);
  3. its loss with labels is the shifted next-token cross-entropy of its logits.

Needs torch and transformers (the GPU machine); exits 1 on a failed check, 2 when transformers
cannot be imported. Usage:
  python3 tests/reference/hf_export_check.py --fp8lab FP8LAB --workdir DIR [--device cuda]
"""
import argparse
import os
import shutil
import sys

from fp8lab_fixture import Fp8labRun, argmax_agreement, run

failures = []


def check(ok, message):
    print(f"  {'ok  ' if ok else 'FAIL'} {message}", flush=True)
    if not ok:
        failures.append(message)


class LogitsOf:
    """What fp8lab_torch.evaluate takes (cfg, parameters, model(idx) -> logits) around a
    transformers model."""

    def __init__(self, hf_model, cfg):
        self.hf, self.cfg = hf_model, cfg

    def parameters(self):
        return self.hf.parameters()

    def __call__(self, idx):
        return self.hf(idx).logits


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fp8lab", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    # transformers copies the remote code into its modules cache: keep it in the workdir.
    os.environ["HF_HOME"] = os.path.join(args.workdir, "hf_home")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM
    except ImportError as e:
        print(f"hf_export_check: cannot import torch and transformers: {e}")
        sys.exit(2)
    import fp8lab_torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"hf_export_check: torch {torch.__version__}, transformers {transformers.__version__}, "
          f"device {args.device}")
    r = Fp8labRun(args.fp8lab, args.workdir)
    out = os.path.join(args.workdir, "exported")
    print(run([r.fp8lab, "export", "--format", "hf", "--checkpoint", r.run_dir, "--out", out])
          .decode(), end="")

    hf = AutoModelForCausalLM.from_pretrained(out, trust_remote_code=True).to(args.device).eval()
    ref = fp8lab_torch.load(r.run_dir, device=args.device)
    check(type(hf).__name__ == "Fp8labGPTForCausalLM", f"the auto class is {type(hf).__name__}")
    hf_params = dict(hf.named_parameters())
    check(all(torch.equal(hf_params[n], t) for n, t in ref.named_parameters()) and
          len(hf_params) == len(dict(ref.named_parameters())),
          "every weight loaded under its fp8lab name, bit for bit")
    torch.manual_seed(r.seed)
    idx = torch.randint(0, ref.cfg["vocab_size"], (3, ref.cfg["seq_len"]), device=args.device)
    with torch.no_grad():
        got, want = hf(idx).logits, ref(idx)
        rel = float((got - want).norm() / want.norm())
        print(f"[measured] logits of the transformers model vs fp8lab_torch: relative {rel:.3g}")
        check(rel <= 1e-6, "the transformers model's logits are fp8lab_torch's")
        loss = hf(idx, labels=idx).loss
        want_loss = torch.nn.functional.cross_entropy(
            got[:, :-1].reshape(-1, got.shape[-1]).float(), idx[:, 1:].reshape(-1))
        check(abs(float(loss) - float(want_loss)) <= 1e-6 * float(want_loss),
              f"labels give the shifted next-token loss ({float(loss):.6f})")

    mixed = AutoModelForCausalLM.from_pretrained(out, trust_remote_code=True,
                                                 fp8lab_mixed=True).to(args.device).eval()
    ref_eval = r.eval_json()
    with torch.no_grad():
        got_eval = fp8lab_torch.evaluate(LogitsOf(mixed, ref.cfg), r.data, batch_rows=4)
    rel = abs(got_eval["ce"] - ref_eval["ce_nats"]) / ref_eval["ce_nats"]
    print(f"[measured] CE fp8lab eval {ref_eval['ce_nats']:.9f}, transformers (fp8lab_mixed) "
          f"{got_eval['ce']:.9f}: relative {rel:.3g}")
    check(rel <= 1e-5, "with fp8lab_mixed its CE is fp8lab eval's to 1e-5")

    prompt = "the lord"
    picks = r.greedy(prompt, 40)
    with torch.no_grad():
        exact, bad = argmax_agreement(lambda t: mixed(t.to(args.device)).logits.cpu(),
                                      list(prompt.encode()), picks, near_tie=1e-3)
    print(f"[measured] greedy: {exact} of {len(picks)} fp8lab picks are the argmax exactly")
    check(not bad, f"fp8lab sample's greedy picks are its argmax {bad[:2]}")
    print(f"hf_export_check: {'PASS' if not failures else 'FAIL'} ({len(failures)} failed)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
