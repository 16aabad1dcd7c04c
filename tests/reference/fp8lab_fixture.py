"""A fresh tiny fp8lab run for the Python checks (fp8lab_torch_check.py, hf_export_check.py),
made with the fp8lab binary: a byte-level corpus with structure, its shards, a few training
steps on the CPU, and the binary's own numbers to compare against (eval's cross-entropy, sample's
greedy text)."""
import json
import os
import random
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

WORDS = "the lord said unto moses and he went up into mount of god behold".split()
# Small enough for seconds on two cores; head_dim 32, context 64.
MODEL = {"model.d_model": 64, "model.n_layers": 2, "model.n_heads": 2, "model.seq_len": 64}


def run(cmd, **kw):
    """Runs a command; its stdout (bytes), raising with its stderr when it fails."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n"
                           f"{p.stderr.decode(errors='replace')}")
    return p.stdout


class Fp8labRun:
    """A trained run in `workdir` (run/, data/) and the binary that made it."""

    def __init__(self, fp8lab, workdir, seed=None, steps=24):
        self.fp8lab = fp8lab
        self.workdir = workdir
        self.seed = seed if seed is not None else random.SystemRandom().randrange(1, 2**31)
        print(f"[fixture] seed {self.seed} (training weights and corpus)", flush=True)
        rng = random.Random(self.seed)
        txt = os.path.join(workdir, "txt")
        os.makedirs(txt, exist_ok=True)
        # Three of the twelve documents under held/: the validation split, whatever the seed (a
        # hash split of 12 documents leaves it empty for about 3% of seeds).
        os.makedirs(os.path.join(txt, "held"), exist_ok=True)
        for d in range(12):
            stride = rng.randrange(1, 7)
            words = [WORDS[(i * stride + i // 5 + d) % len(WORDS)] for i in range(220)]
            with open(os.path.join(txt, "held" if d >= 9 else "", f"doc{d}.txt"), "w") as f:
                f.write(" ".join(words) + "\n")
        self.data = os.path.join(workdir, "data")
        run([fp8lab, "data", "prepare", "--tokenizer", "byte", "--input", txt, "--split",
             "subtree", "--heldout-subtree", "held", "--out", self.data, "--quiet"])
        self.run_dir = os.path.join(workdir, "run")
        sets = [a for k, v in MODEL.items() for a in ("--set", f"{k}={v}")]
        run([fp8lab, "train", "--preset", "tiny", "--backend", "cpu", "--steps", str(steps),
             "--set", f"train.seed={self.seed}", "--set", "train.micro_batch=4",
             "--set", "data.kind=shards", "--set", f"data.train={self.data}",
             "--set", "optim.lr=0.003", "--no-progress", "--out", self.run_dir, *sets],
            env={**os.environ, "OMP_WAIT_POLICY": "passive"})

    def checkpoint_dir(self):
        with open(os.path.join(self.run_dir, "checkpoints", "latest")) as f:
            return os.path.join(self.run_dir, "checkpoints", f.read().strip())

    def eval_json(self, batch=4):
        """`fp8lab eval --json` of the run's held-out split, bf16 on the CPU backend."""
        out = run([self.fp8lab, "eval", "--checkpoint", self.run_dir, "--policy", "bf16",
                   "--data", self.data, "--backend", "cpu", "--batch", str(batch), "--json"])
        return json.loads(out)

    def greedy(self, prompt, n):
        """The ids `fp8lab sample` picks greedily after `prompt` (byte tokens: its stdout bytes
        after the prompt, before the closing newline)."""
        out = run([self.fp8lab, "sample", "--checkpoint", self.run_dir, "--prompt", prompt,
                   "--max-new-tokens", str(n), "--temperature", "0", "--backend", "cpu"])
        assert out.startswith(prompt.encode()) and out.endswith(b"\n"), out[:80]
        return list(out[len(prompt):-1])


def argmax_agreement(logits_fn, prompt_ids, fp8lab_ids, near_tie):
    """Feeds prompt + fp8lab's picks to logits_fn (ids -> [T, vocab] logits) and checks each pick
    against its argmax. Returns (exact matches, failures): a differing pick is a failure unless
    the model's logit for fp8lab's pick is within `near_tie` of its maximum."""
    import torch

    seq = list(prompt_ids) + list(fp8lab_ids)
    logits = logits_fn(torch.tensor([seq[:-1]]))[0]
    exact, failures = 0, []
    for s, tok in enumerate(fp8lab_ids):
        row = logits[len(prompt_ids) - 1 + s]
        best = int(row.argmax())
        if best == tok:
            exact += 1
        elif float(row.max() - row[tok]) > near_tie:
            failures.append(f"step {s}: fp8lab picked {tok}, the argmax is {best} "
                            f"(logits {float(row[tok]):.6f} vs {float(row.max()):.6f})")
    return exact, failures
