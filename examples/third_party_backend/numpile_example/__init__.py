"""A template numpile backend: plugin.py is what numpile loads, backend.py is the compiler."""
