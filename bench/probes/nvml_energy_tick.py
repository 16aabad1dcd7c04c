"""How finely NVML's total-energy counter resolves a bench's timed repeats.

`fp8lab bench model` and gpt_peer.py read the counter before and after an arm's timed repeats
(~1 s at gpt50m). If the counter only moves every P ms, that difference is off by up to one
step of the counter at each end: the first such report read 750 W for an arm under the
700 W cap. This probe keeps the GPU busy with bf16 GEMMs for --seconds, polls the counter in a
tight loop, and prints how often it moves, by how much, and the power each step implies.

    python3 bench/probes/nvml_energy_tick.py [--seconds 3] [--json out.json]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from nvml_energy import EnergyCounter, torch_pci_bus_id  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="how long the GPU stays busy")
    ap.add_argument("--json", help="also write the steps here")
    args = ap.parse_args()
    dev = torch.cuda.current_device()
    bus = torch_pci_bus_id(dev)
    counter = EnergyCounter(bus)
    if not counter.available:
        sys.exit(f"nvml_energy_tick: no counter: {counter.why_not}")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    # Time one GEMM, then queue enough of them to stay busy for --seconds.
    t = time.perf_counter()
    for _ in range(10):
        a @ b
    torch.cuda.synchronize()
    per = (time.perf_counter() - t) / 10
    n = max(1, int(args.seconds / per))
    for _ in range(n):
        a @ b
    steps = []  # (host seconds, joules) each time the counter moved
    t0 = time.perf_counter()
    last = counter.joules()
    reads = 0
    while time.perf_counter() - t0 < args.seconds * 0.9:
        j = counter.joules()
        reads += 1
        if j != last:
            steps.append((time.perf_counter() - t0, j - last))
            last = j
    torch.cuda.synchronize()
    if len(steps) < 3:
        sys.exit(f"nvml_energy_tick: the counter moved {len(steps)} times in {reads} reads")
    gaps = [(b[0] - a[0]) * 1e3 for a, b in zip(steps, steps[1:])]
    watts = [s[1] / (g * 1e-3) for s, g in zip(steps[1:], gaps)]
    out = {
        "gpu": bus, "gemm_ms": per * 1e3, "reads": reads, "steps": len(steps),
        "step_ms_median": statistics.median(gaps), "step_ms_min": min(gaps),
        "step_ms_max": max(gaps), "step_j_median": statistics.median(s[1] for s in steps[1:]),
        "watts_per_step_median": statistics.median(watts), "watts_min": min(watts),
        "watts_max": max(watts),
        "window_watts": sum(s[1] for s in steps[1:]) / (steps[-1][0] - steps[0][0]),
    }
    print("nvml_energy_tick: the counter moved {steps} times in {reads} reads; every "
          "{step_ms_median:.1f} ms (min {step_ms_min:.1f}, max {step_ms_max:.1f}), by "
          "{step_j_median:.2f} J; per step {watts_per_step_median:.0f} W (min {watts_min:.0f}, "
          "max {watts_max:.0f}); over the window {window_watts:.0f} W".format(**out))
    if args.json:
        out["samples"] = steps
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
