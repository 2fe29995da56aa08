"""numpile's version, `numpile.__version__`: a module of its own, so that the modules the package
imports can read it before `__init__.py` has run to its end."""

__version__ = "0.1.0"
