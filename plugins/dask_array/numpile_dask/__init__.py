"""numpile-dask: the numpile backend "dask" (see plugin.py for what numpile loads)."""
