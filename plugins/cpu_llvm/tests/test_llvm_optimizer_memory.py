"""Optimising a module leaves nothing behind but what llvmlite itself never frees: a process that
compiles many distinct kernels grows by a few KB a module, not by the 70 KB (140 KB for
numpile's larger kernels) of a pass pipeline that llvmlite 0.50's close() does not delete."""

from __future__ import annotations

import gc
import os

import pytest

from numpile_llvm import jit

# A vectorisable loop: the -O3 pipeline's loop and SLP passes all run on it.
KERNEL = """
define void @kernel(ptr noalias %a, ptr noalias %b, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pa = getelementptr inbounds double, ptr %a, i64 %i
  %pb = getelementptr inbounds double, ptr %b, i64 %i
  %x = load double, ptr %pa
  %y = fmul double %x, 3.0
  %z = fadd double %y, 1.0
  store double %z, ptr %pb
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
"""
MODULES = 400
BOUND = 16 * 1024  # bytes a module: ~3 KB now (llvmlite's pass builder), 70 KB when the pipeline leaked


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_optimising_many_modules_grows_a_few_kb_a_module():
    for _ in range(50):   # the pipeline's one-time set-up (option tables, the allocator's arenas)
        jit.optimize(KERNEL)
    gc.collect()
    before = _rss()
    for _ in range(MODULES):
        jit.optimize(KERNEL)
    gc.collect()
    grown = (_rss() - before) / MODULES
    assert grown < BOUND, f"{grown / 1024:.1f} KB a module optimised"
