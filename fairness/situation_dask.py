"""Situation testing's neighbour searches on a Dask cluster: the complainants partitioned, the search spaces
broadcast.

Each k-NN search (the control group's, the test group's, the counterfactual test group's) is split by
complainant (query) into chunks of ``chunk`` centres, one task each; the search space (features, categories,
row ids) is scattered once to every worker. A task runs the single-machine search
(:func:`fairness.situation_testing._knn`) on its chunk against the whole space, so each list is exactly the
single-machine list (a list depends only on its centre and the space) and the results are the same numbers. The
rest of situation testing (shares, intervals, tests) runs where it was called. Dask is imported by the client's
owner (:func:`fairness.distributed.dask_client`), not here.
"""

from typing import Any

import numpy as np

from fairness import situation_testing

CHUNK = 20_000  # complainants per task: a task's lists take CHUNK x k x 8 bytes (40 MB at k = 251)


def _chunk(centers, center_cats, space, k):
    return situation_testing._knn(centers, center_cats, *space, k)


class DaskNeighbours(situation_testing.NeighbourCache):
    """A :class:`fairness.situation_testing.NeighbourCache` whose searches run on the Dask ``client``'s cluster;
    pass it as ``situation_testing(..., cache=DaskNeighbours(client))``."""

    def __init__(self, client: Any, chunk: int = CHUNK) -> None:
        super().__init__()
        if chunk < 1:
            raise ValueError(f"chunk must be at least 1 complainant (got {chunk})")
        self.client, self.chunk, self.tasks = client, chunk, 0

    def search(self, centers, center_cats, space, space_cats, ids, k):
        [shared] = self.client.scatter([(space, space_cats, ids)], broadcast=True, hash=False)
        starts = range(0, len(centers), self.chunk)
        futures = [
            self.client.submit(
                _chunk, centers[a : a + self.chunk], center_cats[a : a + self.chunk], shared, k, pure=False
            )
            for a in starts
        ]
        self.tasks += len(futures)
        return np.vstack(self.client.gather(futures))
