"""numpile: a just-in-time compiler for NumPy programs with pluggable backends."""

__version__ = "0.1.0"
