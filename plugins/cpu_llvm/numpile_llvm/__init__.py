"""numpile-llvm: the numpile backend "llvm" (see plugin.py for what numpile loads)."""
