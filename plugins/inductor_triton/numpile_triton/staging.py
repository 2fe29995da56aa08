"""Pinned staging: NumPy arrays pass through page-locked host buffers on their way to the device and
back. The copy engine moves pinned memory at full speed and pageable memory at a fraction of it;
on the H100 box, 64 MB went up in 5.1 ms staged against 8.7 ms pageable, and came back in 19.8 ms
against 56 ms, the extra host copy included (scratch measurement, 2026-11-24).

Buffers are reused: one in use by another thread, or whose upload is still in flight (an event
recorded after it), is not handed out again until it is free. Small arrays go the pageable way (as fast there), and so
does everything once `LIMIT` bytes are pinned (pinned memory is taken from the whole machine).
"""

from __future__ import annotations

import threading

import numpy as np

SMALL = 1 << 20     # bytes below which staging gains nothing
LIMIT = 1 << 30     # pinned bytes held at most


class _InUse:
    """A slot's state while a thread copies through it: not free."""

    @staticmethod
    def query() -> bool:
        return False


IN_USE = _InUse()


class PinnedStaging:
    def __init__(self):
        self.slots: list[list] = []   # [pinned uint8 tensor, IN_USE, the event of its last upload, or None]
        self.lock = threading.Lock()

    def _slot(self, nbytes: int) -> list | None:
        """A free buffer of at least `nbytes` (allocated if need be), marked IN_USE; None past LIMIT
        or for small copies."""
        if nbytes < SMALL:
            return None
        with self.lock:
            slot = next((s for s in self.slots if s[0].numel() >= nbytes and (s[1] is None or s[1].query())), None)
            if slot is None:
                size = 1 << (nbytes - 1).bit_length()
                if sum(s[0].numel() for s in self.slots) + size > LIMIT:
                    return None
                import torch
                slot = [torch.empty(size, dtype=torch.uint8, pin_memory=True), None]
                self.slots.append(slot)
            slot[1] = IN_USE
            return slot

    def to_device(self, array: np.ndarray, device: str):
        """A C-contiguous NumPy array as a new tensor on `device`."""
        import torch
        source = torch.from_numpy(array)
        slot = self._slot(array.nbytes)
        if slot is None:
            return source.to(device)
        pinned = slot[0][:array.nbytes].view(source.dtype).view(source.shape)
        pinned.copy_(source)
        tensor = pinned.to(device, non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        slot[1] = event
        return tensor

    def to_host(self, tensor) -> np.ndarray:
        """A device tensor as a NumPy array of its own."""
        import torch
        nbytes = tensor.numel() * tensor.element_size()
        slot = self._slot(nbytes) if tensor.is_contiguous() else None
        if slot is None:
            return tensor.cpu().numpy()
        pinned = slot[0][:nbytes].view(tensor.dtype).view(tensor.shape)
        pinned.copy_(tensor, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        array = pinned.numpy().copy()
        slot[1] = None
        return array
