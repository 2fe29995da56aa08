"""Where kernels run and how arrays get there. torch (Triton's runtime) and triton are imported on
first use, never when numpile loads the plugin; a program of CuPy arrays does not import torch at
all (Triton reads CuPy's device and stream: cupy_driver.py).

Kernels run on the CUDA device, or with TRITON_INTERPRET=1 on the CPU through Triton's
interpreter, torch CPU tensors carrying the data. Device buffers are arrays of one library per
compiled program (`Arrays`): CuPy arrays when the inputs are CuPy arrays, so that a call neither
converts them nor needs torch tensors (a DLPack exchange each way costs 10-30 µs); torch tensors
otherwise (torch CUDA tensors, or NumPy arrays copied up in C order and results copied back).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os

import numpy as np

from . import cupy_driver
from .reuse import cupy_holders
from .staging import PinnedStaging


def interpreting() -> bool:
    """Whether Triton runs kernels through its interpreter (TRITON_INTERPRET=1), as Triton reads it."""
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


@functools.cache
def _availability(interpreter: bool) -> tuple[bool, str]:
    """Whether kernels can run, without importing torch where CuPy sees a device (cupy_driver.py)."""
    if importlib.util.find_spec("torch") is None:
        return False, "torch is not installed; it is Triton's runtime"
    try:
        import triton  # noqa: F401
    except ImportError as e:
        return False, f"triton is not installed ({e})"
    if not interpreter and not (_cupy_devices() or _torch_cuda()):
        return False, "no CUDA device (TRITON_INTERPRET=1 runs the kernels through Triton's interpreter on the CPU)"
    return True, ""


def _cupy_devices() -> int:
    cupy = _cupy()
    if cupy is None:
        return 0
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        return 0


def _torch_cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def availability() -> tuple[bool, str]:
    return _availability(interpreting())


def place_triton_cache() -> None:
    """Triton's cache of compiled kernels inside numpile's cache directory, beside the kernels'
    source (a second process compiles nothing; deleting numpile's cache deletes both), unless the
    user placed it with TRITON_CACHE_DIR."""
    if "TRITON_CACHE_DIR" not in os.environ:
        from triton import knobs
        from numpile import disk_cache
        knobs.cache.dir = str(disk_cache.directory("triton/compiled"))


def name() -> str:
    """The torch device kernels run on."""
    return "cpu" if interpreting() else "cuda"


@functools.cache
def torch_dtype(dtype: np.dtype):
    import torch
    return torch.from_numpy(np.empty(0, dtype)).dtype


def real_view(tensor):
    """A complex torch tensor as the floats Triton's JIT takes for it: its (real, imag) pairs, which
    complex kernels read (pairs.py); anything else as it is."""
    if getattr(tensor, "is_complex", None) is None or not tensor.is_complex():
        return tensor
    import torch
    return torch.view_as_real(tensor)


def resident(value) -> bool:
    """Whether `value` is a device array (a CuPy array or a CUDA tensor, as numpile.array_kinds
    hands them over): it stays on the device, and so do the results of a call with it."""
    return hasattr(value, "__cuda_array_interface__") or type(value).__module__ == "torch" and value.device.type == "cuda"


def _host_array(x, copy: bool) -> np.ndarray:
    """A NumPy array (or scalar) in C order; a copy when asked for or when it cannot be shared."""
    a = np.asarray(x)
    if copy or not a.flags.c_contiguous or not a.flags.writeable:
        a = np.array(a, order="C", copy=True)
    return a


def cupy_copy(cupy, x):
    """A host array or number as a new CuPy array, bit for bit. CuPy makes a 0-d array by `fill`,
    which writes a value `== 0` with a memset: -0.0 came back +0.0 (CuPy 14.2, the H200); an array
    of one element is copied from the host as every other array is."""
    a = _host_array(x, False)
    return cupy.asarray(a.reshape(1)).reshape(()) if a.ndim == 0 else cupy.asarray(a)


class TorchArrays:
    """Device buffers as torch tensors: for NumPy inputs, torch CUDA tensors and the interpreter."""

    operators: dict = {}   # externs run through NumPy's functions on CuPy views of the tensors (CupyArrays')

    def __init__(self, device_externs: bool = False):
        self.staging = PinnedStaging()   # NumPy arrays' way to the device and back
        # NumPy's functions do not take tensors. Programs of CUDA tensors run externs through CuPy
        # on the tensors' memory (DLPack, no copy) where CuPy is installed, as programs of CuPy
        # arrays do; programs of NumPy arrays run them with NumPy on host copies: NumPy's results,
        # which CuPy's do not always equal (a float16 cumsum rounds differently)
        self.cupy = _cupy() if device_externs and not interpreting() else None
        if not interpreting():
            cupy_driver.uninstall()   # Triton's own driver reads torch's device and stream

    @property
    def numpy_api(self) -> bool:
        return self.cupy is not None

    def asarray(self, value):
        """An extern's result (a CuPy array, or a number) as a tensor."""
        import torch
        return torch.from_dlpack(value if isinstance(value, self.cupy.ndarray) else cupy_copy(self.cupy, value))

    @staticmethod
    def is_array(value) -> bool:
        return type(value).__module__ == "torch" and type(value).__name__ == "Tensor"

    @staticmethod
    def as_dtype(tensor, dtype: np.dtype):
        """An extern's result in the dtype NumPy gives (CuPy's function may give another)."""
        wanted = torch_dtype(dtype)
        return tensor if tensor.dtype == wanted else tensor.to(wanted)

    def numpy_view(self, tensor):
        """What NumPy's functions run on for a tensor: a CuPy array viewing it."""
        return self.cupy.from_dlpack(tensor)

    def to_device(self, x, copy: bool):
        """A NumPy array (or scalar) as a C-ordered tensor on the device, a device array as a tensor
        viewing it (zero-copy through DLPack); `copy`: never share the array's memory (the program
        writes into it). The interpreter always gets a copy: it tells tensors' memory apart by where
        their storage starts, which two views of one array share."""
        import torch
        if resident(x):
            tensor = x if isinstance(x, torch.Tensor) else torch.from_dlpack(x)
            return tensor.clone(memory_format=torch.contiguous_format) if copy else tensor.contiguous()
        if interpreting():
            return torch.from_numpy(_host_array(x, True))
        return self.staging.to_device(_host_array(x, False), name())

    def to_host(self, tensor) -> np.ndarray:
        return tensor.numpy() if tensor.device.type == "cpu" else self.staging.to_host(tensor)

    def empty(self, shape: tuple, dtype: np.dtype):
        import torch
        return torch.empty(shape, dtype=torch_dtype(dtype), device=name())

    def zeros(self, shape: tuple, dtype: np.dtype):
        import torch
        return torch.zeros(shape, dtype=torch_dtype(dtype), device=name())

    @staticmethod
    def copy(tensor):
        return tensor.clone()

    @staticmethod
    def pointer(tensor) -> int:
        return tensor.data_ptr()

    pointer_source = "{}.data_ptr()"   # `pointer` as runner source
    # no `holders`: a view of a tensor need not hold its base's Python object, so a bound runner
    # cannot tell who holds a tensor's memory and allocates every buffer (reuse.py)

    @staticmethod
    def tensor(array):
        return array

    def stream(self) -> int:
        import torch
        return torch.cuda.current_stream().cuda_stream

    @staticmethod
    def capability() -> str:
        """The current device's compute capability, as "90"."""
        import torch
        return "%d%d" % torch.cuda.get_device_capability()

    @staticmethod
    def synchronize() -> None:
        import torch
        torch.cuda.synchronize()


def _matmul(a, b):
    """`a @ b`, a C-ordered stack of matrices times one matrix as one product of all their rows:
    CuPy runs a stack as a batched product, NPBench doitgen's 3600 (1x128 @ 128x128) in 198 µs on
    the H200 against 35 µs as one 3600x128 @ 128x128."""
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:
        rows = math.prod(a.shape[:-1])
        return (a.reshape(rows, a.shape[-1]) @ b).reshape(*a.shape[:-1], b.shape[1])
    return a @ b


class CupyArrays:
    """Device buffers as CuPy arrays, for CuPy inputs: kernels get their addresses, externs run
    through CuPy (NumPy's functions dispatch to it), results are CuPy arrays."""

    numpy_api = True
    # ops an extern runs as CuPy's own operator once it ran on the device, where the call has no
    # keywords: NumPy's function reaches the same CuPy function through __array_function__ and CuPy's
    # gufunc frames (a 64x64 product: np.matmul 27.6 µs of host time on the H200, `a @ b` 23.5)
    operators = {"matmul": _matmul}

    def __init__(self):
        import cupy
        self.cupy, self.ndarray = cupy, cupy.ndarray
        cupy_driver.install()   # Triton reads CuPy's device and stream: no torch imported

    def to_device(self, x, copy: bool):
        cupy = self.cupy
        if isinstance(x, cupy.ndarray):   # (not ascontiguousarray, which makes a 0-d array 1-d)
            return cupy.array(x, order="C", copy=True) if copy or not x.flags.c_contiguous else x
        return cupy_copy(cupy, x)

    def to_host(self, array) -> np.ndarray:
        return self.cupy.asnumpy(array)

    def updated(self, x, others: tuple):
        """The caller's array `x` for kernels to update in place (a bound runner's, runner.py): itself
        where C-ordered and sharing no allocation with another argument, which the kernels may read
        while they write; else a copy, which the graph's write-back copies into `x`. A copy of gemm's
        C cost 45 µs of a 145 µs call on the H200, and the write-back another launch."""
        if x.flags.c_contiguous:
            mem = x.data.mem
            start, end = mem.ptr, mem.ptr + mem.size
            if not any(type(o) is self.ndarray and o.data.mem.ptr < end and start < o.data.mem.ptr + o.data.mem.size
                       for o in others):
                return x
        return self.cupy.array(x, order="C", copy=True)

    def empty(self, shape: tuple, dtype: np.dtype):
        return self.cupy.ndarray(shape, dtype)   # cupy.empty's own call of it, without its Python frame

    def zeros(self, shape: tuple, dtype: np.dtype):
        return self.cupy.zeros(shape, dtype)

    def asarray(self, value):
        return value if type(value) is self.ndarray else cupy_copy(self.cupy, value)

    def is_array(self, value) -> bool:
        return isinstance(value, self.cupy.ndarray)

    @staticmethod
    def as_dtype(array, dtype: np.dtype):
        """An extern's result in the dtype NumPy gives (CuPy's function may give another), by name
        too: CuPy's nanargmax gives int64 as 'q' (long long), equal to NumPy's 'l' (long) but whose
        scalars are another type (numpy.longlong, not numpy.int64); the same bits, so a view."""
        if array.dtype != dtype:
            return array.astype(dtype)
        return array if array.dtype.char == dtype.char else array.view(dtype)

    @staticmethod
    def numpy_view(array):
        return array

    @staticmethod
    def copy(array):
        return array.copy()

    @staticmethod
    def pointer(array) -> int:
        return array.data.ptr

    pointer_source = "{}.data.ptr"   # `pointer` as runner source
    holders = staticmethod(cupy_holders)   # who can reach an array's memory (reuse.py)

    tensor = cupy_driver.Pointer   # what Triton's JIT takes for an array when it compiles

    def stream(self) -> int:
        return self.cupy.cuda.get_current_stream().ptr

    def capturing(self) -> bool:
        """Whether the current stream is being captured into a CUDA graph."""
        return self.cupy.cuda.get_current_stream().is_capturing()

    def capability(self) -> str:
        """The current device's compute capability, as "90" (without starting torch's CUDA state)."""
        return self.cupy.cuda.Device().compute_capability

    def synchronize(self) -> None:
        self.cupy.cuda.Device().synchronize()


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def arrays_for(example_inputs) -> TorchArrays | CupyArrays:
    """The library of a program's device buffers: CuPy's for CuPy inputs, torch's otherwise."""
    if not interpreting() and any(type(v).__module__.startswith("cupy") and resident(v) for v in example_inputs):
        return CupyArrays()
    return TorchArrays(device_externs=any(map(resident, example_inputs)))
