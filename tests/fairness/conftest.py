import pytest


@pytest.fixture(scope="package")
def dask_cluster():
    """One two-worker local Dask cluster (worker processes) for every test here that needs a running cluster:
    starting one costs about 13 CPU-seconds (each worker process imports the science stack). Tests that use it
    are marked ``serial`` (its processes must not share the machine with the parallel part); a test that kills a
    worker starts a cluster of its own (the nanny's replacement took over 120 s under load)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster
