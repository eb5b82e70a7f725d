"""Read a subjects Parquet file on Dask, for subjects files larger than memory.

Only the columns the audit reads leave the file (``id``, ``score_*``, ``label_*``, the effort series ``x_*``,
``inertia`` or ``race``, the ``groups`` and the truth; every column when an effort file's groups are guessed):
Dask reads the file's row groups in parallel on the cluster (a LocalCluster of this machine, or a running one by
its scheduler address, ``fairness.distributed.dask_client``) and hands back that narrow table, a few numbers per
subject, which :func:`fairness.model_audit.read_subjects` checks as any other. The audit is then the same code on
the same numbers as the single-machine path; Dask is imported only inside the function.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fairness.distributed import dask_client
from fairness.model_audit import MODEL_PREFIXES, SubjectsFileError

AUDITED_PREFIXES = (*MODEL_PREFIXES, "x_")


def audited_columns(names: Sequence[str], *, groups: Sequence[str] | None, outcome_column: str | None) -> list[str]:
    """The columns of ``names`` the audit reads, in file order (all of them when ``groups`` is None: an effort
    file's group columns are guessed from every column)."""
    if groups is None:
        return list(names)
    wanted = {"id", "inertia", "race", *groups, *([outcome_column] if outcome_column else [])}
    return [name for name in names if name in wanted or name.startswith(AUDITED_PREFIXES)]


def read_subjects_dask(
    path: str | Path,
    *,
    groups: Sequence[str] | None = None,
    outcome_column: str | None = None,
    client: Any = None,
    scheduler: str | None = None,
) -> pd.DataFrame:
    """The audited columns of the Parquet file ``path``, read as a Dask DataFrame on a cluster (``client``, else
    ``scheduler`` or DASK_SCHEDULER_ADDRESS, else a LocalCluster) and gathered into a pandas DataFrame.

    Raises
    ------
    SubjectsFileError
        The file cannot be read as Parquet.
    """
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise SubjectsFileError(f"cannot read {path} as Parquet: {exc}") from exc
    columns = audited_columns(names, groups=groups, outcome_column=outcome_column)
    with dask_client(client, scheduler) as dask:
        frame = dask.compute(dd.read_parquet(path, columns=columns)).result()
    return frame.reset_index(drop=True)
