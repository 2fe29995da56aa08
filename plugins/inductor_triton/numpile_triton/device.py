"""Where kernels run and how arrays get there. torch (Triton's runtime: its tensors are what
kernels take) and triton are imported on first use, never when numpile loads the plugin.

Kernels run on the CUDA device, or with TRITON_INTERPRET=1 on the CPU through Triton's
interpreter, torch CPU tensors carrying the data. NumPy inputs are copied onto the device in C
order (kernels index every buffer as C-ordered) and results copied back as NumPy arrays.
"""

from __future__ import annotations

import functools
import os

import numpy as np


def interpreting() -> bool:
    """Whether Triton runs kernels through its interpreter (TRITON_INTERPRET=1), as Triton reads it."""
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


@functools.cache
def _availability(interpreter: bool) -> tuple[bool, str]:
    try:
        import torch
    except ImportError as e:
        return False, f"torch is not installed ({e}); it is Triton's runtime"
    try:
        import triton  # noqa: F401
    except ImportError as e:
        return False, f"triton is not installed ({e})"
    if not interpreter and not torch.cuda.is_available():
        return False, "no CUDA device (TRITON_INTERPRET=1 runs the kernels through Triton's interpreter on the CPU)"
    return True, ""


def availability() -> tuple[bool, str]:
    return _availability(interpreting())


def name() -> str:
    """The torch device kernels run on."""
    return "cpu" if interpreting() else "cuda"


@functools.cache
def torch_dtype(dtype: np.dtype):
    import torch
    return torch.from_numpy(np.empty(0, dtype)).dtype


def resident(value) -> bool:
    """Whether `value` is a device array (a CuPy array or a CUDA tensor, as numpile.array_kinds
    hands them over): it stays on the device, and so do the results of a call with it."""
    return hasattr(value, "__cuda_array_interface__") or type(value).__module__ == "torch" and value.device.type == "cuda"


def to_device(x, copy: bool):
    """A NumPy array (or scalar) as a C-ordered tensor on the device, a device array as a tensor
    viewing it (zero-copy through DLPack); `copy`: never share the array's memory (the program
    writes into it). The interpreter always gets a copy: it tells tensors' memory apart by where
    their storage starts, which two views of one array share."""
    import torch
    if resident(x):
        tensor = x if isinstance(x, torch.Tensor) else torch.from_dlpack(x)
        return tensor.clone(memory_format=torch.contiguous_format) if copy else tensor.contiguous()
    a = np.asarray(x)
    if copy or interpreting() or not a.flags.c_contiguous or not a.flags.writeable:
        a = np.array(a, order="C", copy=True)
    tensor = torch.from_numpy(a)
    return tensor if interpreting() else tensor.to(name())


def to_host(tensor) -> np.ndarray:
    return tensor.cpu().numpy()


def empty(shape: tuple, dtype: np.dtype):
    import torch
    return torch.empty(shape, dtype=torch_dtype(dtype), device=name())
