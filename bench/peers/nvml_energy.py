"""The GPU's cumulative energy counter through NVML (ctypes; no pynvml needed), for the peer's
energy per step beside fp8lab's (src/bench/energy_counter.hpp reads the same counter).

Every arm on the H200, fp8lab's and PyTorch's, runs at the board's power limit
(docs/performance.md, "How the numbers are taken"), so tokens per joule compares the
two where time alone is blurred by the power cap.

The counter moves only every ~100 ms on the H200 (77-123 ms apart; a read takes ~4 ms;
bench/probes/nvml_energy_tick.py), so two reads around ~1 s of timed calls are off
by up to one step at each end (~±9%). EnergySampler polls it on a thread and records each move;
the energy of a window is the counter interpolated linearly at each end between the moves that
bracket it (as src/bench/energy_sampler.hpp does for fp8lab). That assumes constant power within
the step holding each end: run the same work before the window and after it, until the counter
has moved after its end. A poller beside calls can slow them (docs/performance.md, "FP8
scaling recipes"), so gpt_peer.py times its calls with no sampler and measures energy over as
many calls after them, as fp8lab's bench model does.

    counter = EnergyCounter("0000:3b:00.0")   # the PCI bus id of the GPU
    if not counter.available: print(counter.why_not)
    with EnergySampler(counter.joules) as sampler:
        ... warm up until sampler.has_change_after(started) ...
        t0 = time.perf_counter(); ...the work, synchronized...; t1 = time.perf_counter()
        ... the same work until sampler.has_change_after(t1) ...
        joules = sampler.joules_between(t0, t1)   # None: not bracketed
"""
import bisect
import ctypes
import threading
import time


class EnergyCounter:
    """NVML's total energy since the driver loaded, in joules. Never raises: when the library,
    the GPU or its counter is missing, `available` is False and `why_not` says which."""

    def __init__(self, pci_bus_id, library="libnvidia-ml.so.1"):
        self.pci_bus_id = pci_bus_id
        self.available = False
        self.why_not = ""
        self._lib = None
        self._device = ctypes.c_void_p()
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as e:
            self.why_not = f"cannot load {library}: {e}"
            return
        lib = self._lib
        try:
            lib.nvmlErrorString.restype = ctypes.c_char_p
            rc = lib.nvmlInit_v2()
            if rc != 0:
                self.why_not = f"nvmlInit failed: {self._error(rc)}"
                return
            rc = lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(),
                                                      ctypes.byref(self._device))
            if rc != 0:
                self.why_not = f"NVML has no GPU at PCI bus id '{pci_bus_id}': {self._error(rc)}"
                return
        except AttributeError as e:
            self.why_not = f"{library} lacks an NVML entry point: {e}"
            return
        if self.joules() is None:
            self.why_not = f"the GPU at '{pci_bus_id}' has no energy counter"
            return
        self.available = True

    def _error(self, rc):
        return f"{self._lib.nvmlErrorString(rc).decode()} ({rc})"

    def joules(self):
        """The counter now in joules, or None when it cannot be read."""
        if self._lib is None or not self._device:
            return None
        mj = ctypes.c_ulonglong()
        if self._lib.nvmlDeviceGetTotalEnergyConsumption(self._device, ctypes.byref(mj)) != 0:
            return None
        return mj.value * 1e-3

    def describe(self):
        return f"NVML total energy of GPU {self.pci_bus_id}"


def energy_between(samples, t0, t1):
    """The energy between t0 < t1 from `samples`, (time, joules) pairs in time order, each a
    moment the counter moved: the counter interpolated linearly between the samples that bracket
    each end (one exactly at an end taken as is). None when the window is empty or a sample is
    missing at or before t0 or at or after t1."""
    if t1 <= t0 or not samples or samples[0][0] > t0 or samples[-1][0] < t1:
        return None
    times = [t for t, _ in samples]

    def counter_at(t):
        i = bisect.bisect_left(times, t)  # the first sample at or after t
        if times[i] == t:
            return samples[i][1]
        (ta, ja), (tb, jb) = samples[i - 1], samples[i]
        return ja + (jb - ja) * (t - ta) / (tb - ta)

    return counter_at(t1) - counter_at(t0)


class EnergySampler:
    """Polls `read` (e.g. EnergyCounter.joules) on a thread from construction to close() and
    records (clock(), joules) each time the value differs from the previous read, stamped at the
    middle of that read; the first read is only the baseline. A read that returns None (or
    raises) stops the polling: `read_failed` is then True and the samples so far stay."""

    MIN_READ_INTERVAL_S = 1e-3  # a faster read (a fake counter) sleeps the rest: no spinning

    def __init__(self, read, clock=time.perf_counter):
        self._read = read
        self._clock = clock
        self._samples = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.read_failed = False
        self._thread = threading.Thread(target=self._poll, name="energy-sampler", daemon=True)
        self._thread.start()

    def _poll(self):
        last = None
        while not self._stop.is_set():
            before = self._clock()
            try:
                joules = self._read()
            except Exception:  # noqa: BLE001 - a failed read, as None is
                joules = None
            after = self._clock()
            if joules is None:
                self.read_failed = True
                return
            if last is not None and joules != last:
                with self._lock:
                    self._samples.append(((before + after) / 2, joules))
            last = joules
            if after - before < self.MIN_READ_INTERVAL_S:
                self._stop.wait(self.MIN_READ_INTERVAL_S - (after - before))

    def samples(self):
        with self._lock:
            return list(self._samples)

    def has_change_after(self, t):
        """Whether the counter was seen to move after clock time `t`."""
        with self._lock:
            return bool(self._samples) and self._samples[-1][0] > t

    def joules_between(self, t0, t1):
        """energy_between over the samples so far."""
        return energy_between(self.samples(), t0, t1)

    def close(self):
        self._stop.set()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run_until_counter_moves(sampler, t, call, max_calls=50, max_s=2.0):
    """More untimed `call()`s (each synchronized) until `sampler` has seen the counter move after
    `t`, at most `max_calls` of them or `max_s` seconds (then a window ending at `t` is left
    unmeasured, not wrong), or until a read has failed."""
    start = time.perf_counter()
    for _ in range(max_calls):
        if (sampler.has_change_after(t) or sampler.read_failed
                or time.perf_counter() - start >= max_s):
            return
        call()


def torch_pci_bus_id(device):
    """A torch CUDA device's PCI bus id as NVML takes it ("0000:3b:00.0")."""
    import torch  # only the callers that have a GPU need torch
    p = torch.cuda.get_device_properties(device)
    return (f"{getattr(p, 'pci_domain_id', 0):04x}:{getattr(p, 'pci_bus_id', 0):02x}:"
            f"{getattr(p, 'pci_device_id', 0):02x}.0")


def _self_check():
    """Checks that need no GPU: a missing library says so; the interpolation is exact; the
    sampler's thread records the moves of a fake counter and stops on a failed read."""
    c = EnergyCounter("0000:00:00.0", library="libfp8lab-no-such-nvml.so.1")
    assert not c.available and c.joules() is None, "a missing library must be unavailable"
    assert "cannot load libfp8lab-no-such-nvml.so.1" in c.why_not, c.why_not
    print("nvml_energy: a missing library is reported:", c.why_not)

    # A counter moving every 100 ms by 25 J (250 W); then 500 W from 500 ms on.
    steps = [(0.1 * k, 25.0 * k) for k in range(6)] + [(0.6, 175.0)]

    def near(a, b):
        return a is not None and abs(a - b) < 1e-9

    assert near(energy_between(steps, 0.13, 0.47), 85.0), "mid-step ends: 340 ms at 250 W"
    assert near(energy_between(steps, 0.45, 0.55), 12.5 + 25.0), "each end in its own step's W"
    assert near(energy_between(steps, 0.1, 0.3), 50.0), "samples exactly at the ends"
    assert near(energy_between(steps, 0.0, 0.6), 175.0), "the first and last samples"
    for t0, t1 in ((-0.01, 0.2), (0.2, 0.61), (0.3, 0.3), (0.3, 0.2)):
        assert energy_between(steps, t0, t1) is None, f"({t0}, {t1}) is not bracketed"
    assert energy_between([], 0.0, 1.0) is None
    print("nvml_energy: interpolation between the counter's moves is exact")

    # The thread, on a fake counter moving every 20 ms by 5 J (250 W) from t_start.
    t_start = time.perf_counter()
    step_s, watts = 0.02, 250.0

    def stepping():
        return watts * step_s * int((time.perf_counter() - t_start) / step_s)

    with EnergySampler(stepping) as s:
        run_until_counter_moves(s, t_start, lambda: time.sleep(0.001), max_calls=500)
        t0 = time.perf_counter()
        time.sleep(0.2)
        t1 = time.perf_counter()
        run_until_counter_moves(s, t1, lambda: time.sleep(0.001), max_calls=500)
        joules = s.joules_between(t0, t1)
        samples = s.samples()
    assert joules is not None, "the window is bracketed"
    # Each move is stamped late by the time to the read that saw it; lags within [lo, hi]
    # keep the energy within watts x (hi - lo) of the window's (see test_energy_sampler.cpp).
    lags = [t - (t_start + step_s * round(j / (watts * step_s))) for t, j in samples]
    lo, hi = min(0.0, *lags), max(0.0, *lags)
    expected = watts * (t1 - t0)
    assert abs(joules - expected) <= watts * (hi - lo) + 1e-9, (joules, expected, lo, hi)
    assert abs(joules - expected) <= 0.1 * expected, (joules, expected, lo, hi)
    print(f"nvml_energy: the sampler measured {joules:.2f} J of {expected:.2f} J "
          f"(lags {lo * 1e3:.2f} .. {hi * 1e3:.2f} ms)")

    reads = []

    def fails_after_three():
        reads.append(None)
        return 10.0 * len(reads) if len(reads) <= 3 else None

    with EnergySampler(fails_after_three) as s:
        s._thread.join(timeout=5)  # it ends by itself at the failed read
        assert s.read_failed and len(reads) == 4, (s.read_failed, len(reads))
        assert [j for _, j in s.samples()] == [20.0, 30.0], s.samples()
    print("nvml_energy: a failed read stops the sampler")


if __name__ == "__main__":
    _self_check()
