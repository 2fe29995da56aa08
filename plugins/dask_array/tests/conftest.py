"""One LocalCluster for the test session (two worker processes: a real scheduler, real pickling
and transport), started only by the tests that ask for it."""

import pytest


@pytest.fixture(scope="session")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client
