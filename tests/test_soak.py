"""The soak, short: two processes of threads calling compiled functions with changing shapes and
dtypes (recompiles, cache size limits, graph breaks, fresh functions, resets, one disk cache
shared by both) get NumPy's results, neither crashes nor hangs, and memory levels off.
`python -m numpile.fuzz --soak MINUTES` runs it longer (docs/reliability.md)."""

from __future__ import annotations

import pytest

import numpile
from numpile.fuzz.soak import soak


@pytest.mark.slow
def test_a_short_soak_is_clean(tmp_path):
    backend = "llvm" if "llvm" in numpile.list_backends(available_only=True) else "eager"
    report = soak(backend, minutes=0.4, threads=4, cache_dir=str(tmp_path))
    assert not report.failures, "\n".join(report.failures)
    assert len(report.workers) == 2
    for worker in report.workers:   # each process did all of it
        assert worker["calls"] > 100 and worker["compiles"] > 20 and worker["graph_breaks"] > 0, worker
        assert worker["fresh_functions"] > 0 and worker["resets"] > 0 and worker["limit_hits"] > 0, worker
    assert any(tmp_path.rglob("*.o")) or backend == "eager"   # the shared disk cache was written
