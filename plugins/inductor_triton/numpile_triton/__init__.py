"""numpile-triton: the numpile backend "triton", fused Triton kernels from NumPy code (see plugin.py
for what numpile loads, backend.py for the backend)."""
