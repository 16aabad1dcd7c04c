"""fp8lab's FP8 linear layer in PyTorch: a drop-in for nn.Linear(bias=False).

    import fp8lab_torch
    layer = fp8lab_torch.Linear(768, 3072, recipe="tensorwise")   # "bf16", "rowwise", "blockwise"
    y = layer(x)                                                   # x [..., 768] on CPU or CUDA

The arithmetic is fp8lab's own (libfp8lab_linear.so, the C ABI of include/fp8lab/linear_c.h, via
ctypes; nothing is built against PyTorch): E4M3 x and W, E5M2 dY, current scaling, dW in fp32,
the same bits as an fp8lab run. CPU tensors run the "cpu" backend, CUDA tensors the "cuda" one
on torch.cuda.current_stream(). Inputs are cast to bf16 (what the layer computes in); the output
has the dtype nn.Linear would give (autocast's dtype under torch.autocast, else x's), dX x's
dtype and dW the weight's. FP8 recipes need the row count (x.numel() / in_features), in and out
features to be multiples of 16 (blockwise: 128).

The library: $FP8LAB_LINEAR_LIBRARY when set (the path of libfp8lab_linear.so), else the build
next to this package, <repo>/build/libfp8lab_linear.so (`ninja -C build fp8lab_linear`).
"""
import contextlib
import ctypes
import math
import os

import torch

ABI_VERSION = 1  # FP8LAB_LINEAR_ABI_VERSION of the header this file was written against
RECIPES = ("bf16", "tensorwise", "rowwise", "blockwise")
STATS_LEN = 9
_F32, _BF16 = 0, 1
_DTYPE_CODES = {torch.float32: _F32, torch.bfloat16: _BF16}
_DEFAULT_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                "build", "libfp8lab_linear.so")


class LibraryNotFoundError(FileNotFoundError):
    """libfp8lab_linear.so is not where FP8LAB_LINEAR_LIBRARY or the default says."""


class Fp8labLinearError(RuntimeError):
    """A failure the library reported that is not the caller's value (CUDA, memory, internal)."""


# The library's statuses (FP8LAB_LINEAR_E_*) as Python exceptions.
_EXCEPTIONS = {1: ValueError, 2: ValueError, 3: TypeError, 4: FloatingPointError,
               5: Fp8labLinearError, 6: MemoryError, 7: Fp8labLinearError}


def find_library():
    """The path of libfp8lab_linear.so: $FP8LAB_LINEAR_LIBRARY, else <repo>/build/."""
    env = os.environ.get("FP8LAB_LINEAR_LIBRARY")
    path = os.path.normpath(env if env else _DEFAULT_LIBRARY)
    if not os.path.isfile(path):
        where = ("FP8LAB_LINEAR_LIBRARY=" + env) if env else "the default " + path
        raise LibraryNotFoundError(
            f"libfp8lab_linear.so not found: {where} is not a file (build it with "
            "`ninja -C build fp8lab_linear`, or set FP8LAB_LINEAR_LIBRARY to its path)")
    return path


class Library:
    """libfp8lab_linear.so loaded with ctypes: its functions, statuses turned into exceptions."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise LibraryNotFoundError(f"libfp8lab_linear.so not found: {path} is not a file")
        self.path = path
        self.lib = lib = ctypes.CDLL(path)
        i64, vp, i32 = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int
        signatures = {
            "fp8lab_linear_abi_version": [],
            "fp8lab_linear_create": [ctypes.c_char_p, ctypes.c_char_p, i64, i64,
                                     ctypes.POINTER(vp)],
            "fp8lab_linear_destroy": [vp],
            "fp8lab_linear_forward": [vp, i64, vp, i32, vp, i32, vp, i32, vp,
                                      ctypes.POINTER(vp)],
            "fp8lab_linear_backward": [vp, vp, i64, vp, i32, vp, i32, vp, i32, i32, vp],
            "fp8lab_linear_saved_destroy": [vp],
            "fp8lab_linear_scales": [vp, ctypes.POINTER(ctypes.c_float), i64],
            "fp8lab_linear_counts": [vp, ctypes.POINTER(i64), i64],
        }
        for name, argtypes in signatures.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        lib.fp8lab_linear_last_error.argtypes = []
        lib.fp8lab_linear_last_error.restype = ctypes.c_char_p
        version = lib.fp8lab_linear_abi_version()
        if version != ABI_VERSION:
            raise ImportError(f"{path} has ABI version {version}, fp8lab_torch.linear speaks "
                              f"version {ABI_VERSION}: rebuild the library or update the package")

    def call(self, name, *args):
        """Calls `name`; a non-zero status raises with the library's message."""
        status = getattr(self.lib, name)(*args)
        if status != 0:
            message = self.lib.fp8lab_linear_last_error().decode(errors="replace")
            raise _EXCEPTIONS.get(status, Fp8labLinearError)(f"{name}: {message}")


_library = None


def library():
    """The library, loaded once (find_library says where)."""
    global _library
    if _library is None:
        _library = Library(find_library())
    return _library


class _Handle:
    """One fp8lab_linear of the library: a backend, a recipe, a shape."""

    def __init__(self, lib, backend, recipe, in_features, out_features):
        self.lib, self.backend, self.recipe = lib, backend, recipe
        self.in_features, self.out_features = in_features, out_features
        ptr = ctypes.c_void_p()
        lib.call("fp8lab_linear_create", backend.encode(), recipe.encode(), in_features,
                 out_features, ctypes.byref(ptr))
        self.ptr = ptr

    def __del__(self):
        if getattr(self, "ptr", None):
            self.lib.lib.fp8lab_linear_destroy(self.ptr)


class _Saved:
    """What one forward kept for its backward; holds its handle so that it goes first."""

    def __init__(self, handle, ptr, rows):
        self.handle, self.ptr, self.rows = handle, ptr, rows

    def stats(self):
        """The casts' amax, scale, inv_scale, saturated, underflow, nonfinite of x, w, dy."""
        scales = (ctypes.c_float * STATS_LEN)()
        counts = (ctypes.c_int64 * STATS_LEN)()
        self.handle.lib.call("fp8lab_linear_scales", self.ptr, scales, STATS_LEN)
        self.handle.lib.call("fp8lab_linear_counts", self.ptr, counts, STATS_LEN)
        names = ("amax", "scale", "inv_scale")
        return {t: {**{n: scales[3 * i + j] for j, n in enumerate(names)},
                    "saturated": counts[3 * i], "underflow": counts[3 * i + 1],
                    "nonfinite": bool(counts[3 * i + 2])}
                for i, t in enumerate(("x", "w", "dy"))}

    def __del__(self):
        if getattr(self, "ptr", None):
            self.handle.lib.lib.fp8lab_linear_saved_destroy(self.ptr)


def _stream_of(t):
    """The stream argument for tensor t's device: the current CUDA stream, none on the CPU."""
    if t.device.type != "cuda":
        return None
    return ctypes.c_void_p(torch.cuda.current_stream(t.device).cuda_stream)


def _bf16_operand(t, rows, cols):
    """t as the contiguous, 16-byte aligned bf16 [rows, cols] the library reads."""
    t = t.reshape(rows, cols).to(torch.bfloat16).contiguous()
    return t if t.data_ptr() % 16 == 0 else t.clone()


def _current_device(device):
    """Makes a CUDA device the current one (the library works on the current device)."""
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


def _ptr(t):
    return ctypes.c_void_p(t.data_ptr())


class _LinearFunction(torch.autograd.Function):
    """y = x Wᵀ through the library; the backward reads only what its forward saved."""

    @staticmethod
    def forward(ctx, x, weight, handle, out_dtype, stats_box):
        k, n = handle.in_features, handle.out_features
        rows = x.numel() // k
        xb, wb = _bf16_operand(x, rows, k), _bf16_operand(weight, n, k)
        y = torch.empty(rows, n, dtype=torch.bfloat16, device=x.device)
        ptr = ctypes.c_void_p()
        with _current_device(x.device):
            handle.lib.call("fp8lab_linear_forward", handle.ptr, rows, _ptr(xb), _BF16, _ptr(wb),
                            _BF16, _ptr(y), _BF16, _stream_of(x), ctypes.byref(ptr))
        ctx.saved = _Saved(handle, ptr, rows)
        if stats_box is not None:
            stats_box.append(ctx.saved)
        # Under "bf16" the saved state refers to the bf16 x and W: kept, and checked by autograd
        # for changes in place before the backward reads them.
        ctx.save_for_backward(*((xb, wb) if handle.recipe == "bf16" else ()))
        ctx.x_shape, ctx.x_dtype, ctx.w_dtype = x.shape, x.dtype, weight.dtype
        return y.reshape(*x.shape[:-1], n).to(out_dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        if ctx.saved is None:
            raise RuntimeError("fp8lab_torch.Linear: a second backward through the same forward "
                               "(retain_graph=True): the saved FP8 operands were freed after "
                               "the first, as the graph's own buffers are")
        ctx.saved_tensors  # noqa: B018 - raises if the bf16 operands changed in place
        saved, handle = ctx.saved, ctx.saved.handle
        k, n = handle.in_features, handle.out_features
        dyb = _bf16_operand(dy, saved.rows, n)
        dx = torch.empty(saved.rows, k, dtype=torch.bfloat16, device=dy.device)
        dw = torch.empty(n, k, dtype=torch.float32, device=dy.device)
        with _current_device(dy.device):
            handle.lib.call("fp8lab_linear_backward", handle.ptr, saved.ptr, saved.rows,
                            _ptr(dyb), _BF16, _ptr(dx), _BF16, _ptr(dw), _F32, 0,
                            _stream_of(dy))
        ctx.saved = None  # freed now, not when the graph goes (y may keep it alive a step)
        return dx.reshape(ctx.x_shape).to(ctx.x_dtype), dw.to(ctx.w_dtype), None, None, None


def _autocast_dtype(device_type):
    """The dtype torch.autocast computes in on this device type, or None outside autocast."""
    if hasattr(torch, "get_autocast_dtype"):  # PyTorch 2.4 and later
        enabled = torch.is_autocast_enabled(device_type)
        return torch.get_autocast_dtype(device_type) if enabled else None
    if device_type == "cuda":
        return torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else None
    return torch.get_autocast_cpu_dtype() if torch.is_autocast_cpu_enabled() else None


class Linear(torch.nn.Module):
    """y = x Wᵀ in fp8lab's arithmetic; weight [out_features, in_features] like nn.Linear's.

    recipe: "tensorwise" (default), "rowwise", "blockwise" (FP8) or "bf16". bias must be False
    (the layer has none). device, dtype: of the weight, as in nn.Linear."""

    def __init__(self, in_features, out_features, recipe="tensorwise", bias=False, device=None,
                 dtype=None):
        super().__init__()
        if bias:
            raise ValueError("bias=True: fp8lab_torch.Linear computes y = x W^T without a bias; "
                             "pass bias=False")
        if recipe not in RECIPES:
            raise ValueError(f"unknown recipe {recipe!r}: one of {', '.join(RECIPES)}")
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        self.in_features, self.out_features, self.recipe = in_features, out_features, recipe
        self.weight = torch.nn.Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype or torch.float32))
        self.reset_parameters()
        self._handles = {}  # per device: the library's handles are bound to one
        # True: keep the last forward's saved state (its memory too) for last_stats().
        self.track_stats = False
        self._last_saved = None

    def __getstate__(self):
        # copy.deepcopy and pickling: the library's handles belong to this object alone (a copy
        # would destroy them twice); the copy makes its own on its first forward.
        state = self.__dict__.copy()
        state["_handles"], state["_last_saved"] = {}, None
        return state

    def reset_parameters(self):
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # nn.Linear's

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"recipe={self.recipe}, bias=False"

    def _handle(self, device):
        key = str(device)
        if key not in self._handles:
            lib = library()
            with _current_device(device):
                self._handles[key] = _Handle(lib, device.type, self.recipe, self.in_features,
                                             self.out_features)
        return self._handles[key]

    def _check_input(self, x):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if x.dtype not in (torch.float32, torch.bfloat16, torch.float16):
            raise TypeError(f"x has dtype {x.dtype}: fp8lab_torch.Linear takes float32, "
                            "bfloat16 or float16 (computed in bfloat16)")
        if x.device.type not in ("cpu", "cuda"):
            raise ValueError(f"x is on device {x.device}: fp8lab_torch.Linear runs on cpu or cuda")
        if x.device != self.weight.device:
            raise ValueError(f"x is on {x.device}, the weight on {self.weight.device}")
        if x.dim() < 1 or x.shape[-1] != self.in_features:
            raise ValueError(f"x has shape {tuple(x.shape)}: its last dimension must be "
                             f"in_features={self.in_features}")

    def forward(self, x):
        self._check_input(x)
        out_dtype = _autocast_dtype(x.device.type) or x.dtype
        if x.numel() == 0:  # no rows: nothing for the library to do, the shapes of nn.Linear
            return torch.nn.functional.linear(x.to(out_dtype), self.weight.to(out_dtype))
        box = [] if self.track_stats else None
        y = _LinearFunction.apply(x, self.weight, self._handle(x.device), out_dtype, box)
        if box:
            self._last_saved = box[0]
        return y

    def last_stats(self):
        """The casts' statistics of the last forward (and of its backward once it ran), while
        track_stats is True: {"x"|"w"|"dy": {amax, scale, inv_scale, saturated, underflow,
        nonfinite}}; None before. Reading them waits for the CUDA stream."""
        return None if self._last_saved is None else self._last_saved.stats()
