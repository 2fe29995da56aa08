"""The same programs on a LocalCluster of two worker processes: a real scheduler, chunk
kernels pickled by key and compiled by "llvm" on the workers, results transported back."""

import numpy as np
import pytest

import numpile

from programs import PROGRAMS, assert_matches, inputs_for

CLUSTER_PROGRAMS = ["chain", "broadcast", "sq_diff_sum", "more_reductions", "int_math", "standardize", "softmax",
                    "layer_norm", "through_dask_array"]


@pytest.mark.parametrize("name", CLUSTER_PROGRAMS)
def test_programs_on_local_cluster(cluster_client, name):
    fn, spec = PROGRAMS[name]
    args = inputs_for(spec, seed=7)
    want = fn(*[a.compute(scheduler="sync") for a in args])
    got = numpile.compile(fn)(*args)
    assert_matches(cluster_client.compute(got, sync=True) if not isinstance(got, tuple)
                   else tuple(cluster_client.compute(list(got), sync=True)), want)


def test_workers_compile_by_key(cluster_client):
    """The workers hold the kernels by key after running them (each compiled there, not shipped)."""
    fn, spec = PROGRAMS["chain"]
    args = inputs_for(spec, seed=8)
    cluster_client.compute(numpile.compile(fn)(*args), sync=True)

    def kernels_here():
        from numpile_dask import kernels
        return sorted(k.key for k in kernels._TABLE.values() if k._compiled)
    held = cluster_client.run(kernels_here)
    assert any(any(key.startswith("fused") for key in keys) for keys in held.values()), held


def test_missing_inner_backend_is_a_worker_error(cluster_client):
    from numpile_dask import kernels
    t = kernels.Template((kernels.InputSpec(np.dtype("float64")),), (("sin", (kernels.Ref(0),), {}),), (1,))
    k = kernels.kernel("test-cluster-missing", t, "not-installed", ())
    future = cluster_client.submit(k, np.ones(3))
    with pytest.raises(RuntimeError, match="inner backend 'not-installed' is not available here"):
        future.result()
