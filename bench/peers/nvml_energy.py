"""The GPU's cumulative energy counter through NVML (ctypes; no pynvml needed), for the peer's
energy per step beside fp8lab's (src/bench/energy_counter.hpp reads the same counter).

Every arm on the H200, fp8lab's and PyTorch's, runs at the board's power limit
(docs/perf-notes.md, "The training step is power-bound"), so tokens per joule compares the
two where time alone is blurred by the power cap.

    counter = EnergyCounter("0000:3b:00.0")   # the PCI bus id of the GPU
    if counter.available: j0 = counter.joules(); ...; j1 = counter.joules()
    else: print(counter.why_not)
"""
import ctypes


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


if __name__ == "__main__":  # a check that needs no GPU: a missing library says so
    c = EnergyCounter("0000:00:00.0", library="libfp8lab-no-such-nvml.so.1")
    assert not c.available and c.joules() is None, "a missing library must be unavailable"
    assert "cannot load libfp8lab-no-such-nvml.so.1" in c.why_not, c.why_not
    print("nvml_energy: a missing library is reported:", c.why_not)
