"""Differential fuzzing: random NumPy programs, compiled by a backend, checked against NumPy eager.

    python -m numpile.fuzz --backend llvm --minutes 30

    programs.py     the generator (hypothesis strategies): programs and their inputs
    check.py        the differential check of one program over six calls
    regressions.py  a shrunk failing program written as a pytest file
    runner.py       the loop within a budget, the counts
    __main__.py     the command

Only check.py works without hypothesis (regression files need nothing else): the package
imports none of its modules, so `python -m numpile.fuzz` can say what to install.
"""
