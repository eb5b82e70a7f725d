"""Situation testing on this machine or on a Dask cluster: the engine of the ``situation_testing`` command, the
API's request and its background job."""

from pathlib import Path
from typing import Any

from core.uploads import check_parquet_upload, is_parquet, read_csv_upload
from research.params import run_situation_testing

ENGINES = ("local", "dask")


def situation_testing_run(data, counterfactuals, params: dict) -> Any:
    """:func:`research.params.run_situation_testing` with the neighbour searches where ``params["engine"]`` says:
    "local" (the default, and jobs queued before the option) on this machine; "dask" on the cluster of
    ``params["scheduler"]`` (the command's ``--scheduler`` only: a web request never names a host), else of
    DASK_SCHEDULER_ADDRESS, else a LocalCluster of this machine started and stopped by the run
    (:func:`fairness.distributed.dask_client`), the complainants partitioned into tasks
    (:class:`fairness.situation_dask.DaskNeighbours`): the same results."""
    engine = params.get("engine") or "local"
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "local":
        return run_situation_testing(data, counterfactuals, params)
    from fairness.distributed import dask_client
    from fairness.situation_dask import DaskNeighbours

    with dask_client(scheduler=params.get("scheduler")) as client:
        return run_situation_testing(data, counterfactuals, {**params, "cache": DaskNeighbours(client)})


def read_situation_upload(path: Path, *, name: str, sep: str = ","):
    """An uploaded table of situation testing (the data or its counterfactuals) as a DataFrame: a Parquet file
    (it starts with ``PAR1``) under the row and column limits, else a CSV with ``sep`` under the upload limits
    (:mod:`core.uploads`; ``UploadError`` names the file and the rule)."""
    if not is_parquet(path, name=name):
        return read_csv_upload(path, name=name, sep=sep)
    import pandas as pd  # job side only: the web side imports this module for ENGINES

    check_parquet_upload(path, name=name)
    return pd.read_parquet(path)
