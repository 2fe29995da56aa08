"""Conformance cases of np.fft's transforms, fftshift and ifftshift, and np.vdot (ops/spectral.py)."""

from __future__ import annotations

from .specs import DTYPES, Arr, Case


def spectral_cases() -> list[Case]:
    cases = []
    for name in ("fft", "ifft", "rfft", "irfft"):
        cases += [Case(name, (Arr((3, 6), dt),)) for dt in DTYPES]
        cases += [Case(name, (Arr((3, 6)),), dict(n=4)), Case(name, (Arr((3, 6)),), dict(n=9, axis=0)),
                  Case(name, (Arr((4, 5), layout="T"),), dict(norm="ortho")), Case(name, (Arr((7,), layout="rev"),))]
    cases += [Case("fft", (Arr((5,), "complex128"),)), Case("irfft", (Arr((2, 5), "complex64"),), dict(n=8))]
    for name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"):
        cases += [Case(name, (Arr((4, 6), dt),)) for dt in ("float32", "float64", "int64")]
        cases += [Case(name, (Arr((2, 4, 6)),), dict(axes=(0, 2))), Case(name, (Arr((4, 6)),), dict(s=(3, 8))),
                  Case(name, (Arr((4, 6), layout="step"),), dict(norm="forward"))]
    for name in ("fftshift", "ifftshift"):
        cases += [Case(name, (Arr((4, 5), dt),)) for dt in DTYPES]
        cases += [Case(name, (Arr((4, 5)),), dict(axes=0)), Case(name, (Arr((3, 4, 5), layout="T"),), dict(axes=(0, -1)))]
    cases += [Case("vdot", (Arr((3, 4), dt), Arr((12,), dt))) for dt in DTYPES]
    cases += [Case("vdot", (Arr((6,), "complex128"), Arr((2, 3), "complex64"))), Case("vdot", (Arr((2, 3), layout="T"), Arr((6,), "int32")))]
    return cases
