"""numpile-debug: the numpile backend "debug" (see plugin.py for what numpile loads)."""
