"""Counterfactuals from a linear additive-noise structural causal model (Pearl's three steps).

Each non-root node of a user-given DAG is X_j = b_j + sum_p w_jp * parent_p + U_j, fitted by least
squares; categorical parents enter as indicator columns (first level as the baseline). For a row:
* abduction: U_j = x_j - fitted_j (the residual);
* action: do(A := a) replaces the intervened nodes' values;
* prediction: descendants are recomputed in topological order from their (new) parents plus the
  row's own U_j; non-descendants keep their values.
Rounding and clipping (documented choices, both off by default): ``clip=True`` clips each
recomputed continuous node to the range observed in the fitting data, and ``decimals`` rounds
named nodes (e.g. {"LSAT": 0} for integer scores) after clipping.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


class DAGError(ValueError):
    pass


def topological_order(dag: Mapping[str, Sequence[str]]) -> list[str]:
    """Nodes ordered parents first; raises DAGError naming a cycle."""
    nodes = set(dag) | {p for parents in dag.values() for p in parents}
    state: dict[str, int] = {}
    order: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            cycle = path[path.index(node) :] + [node]
            raise DAGError("the DAG has a cycle: " + " -> ".join(cycle))
        state[node] = 1
        for parent in dag.get(node, []):
            visit(parent, [*path, node])
        state[node] = 2
        order.append(node)

    for node in sorted(nodes):
        visit(node, [])
    return order


@dataclass
class LinearSCM:
    dag: dict[str, list[str]]
    order: list[str]
    coefficients: dict[str, pd.Series]
    levels: dict[str, list]
    ranges: dict[str, tuple[float, float]]

    def _design(self, node: str, frame: pd.DataFrame) -> np.ndarray:
        columns = [np.ones(len(frame))]
        for parent in self.dag[node]:
            if parent in self.levels:
                for level in self.levels[parent][1:]:
                    columns.append((frame[parent].to_numpy() == level).astype(float))
            else:
                columns.append(frame[parent].to_numpy(float))
        return np.column_stack(columns)

    def residuals(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Abduction: U_j = x_j - fitted_j for every modelled node."""
        return pd.DataFrame(
            {
                node: frame[node].to_numpy(float) - self._design(node, frame) @ coef.to_numpy()
                for node, coef in self.coefficients.items()
            },
            index=frame.index,
        )

    def counterfactuals(
        self,
        frame: pd.DataFrame,
        do: Mapping[str, object],
        *,
        clip: bool = False,
        decimals: Mapping[str, int] | None = None,
    ) -> pd.DataFrame:
        """Abduction, action do(...), prediction for every row of ``frame``."""
        unknown = [n for n in do if n not in self.order]
        if unknown:
            raise DAGError(f"cannot intervene on {unknown}: not in the DAG")
        for node, value in do.items():
            if node in self.levels and value not in self.levels[node]:
                raise DAGError(f"{node} never takes the value {value!r} (seen: {self.levels[node]})")
            if node not in self.levels and not (
                isinstance(value, int | float | np.number) and np.isfinite(float(value))
            ):
                raise DAGError(f"{node} is numeric: do({node} := ...) needs a finite number, not {value!r}")
        noise = self.residuals(frame)
        out = frame.copy()
        for node, value in do.items():
            out[node] = value
        changed = set(do)
        for node in self.order:
            if node in do or node not in self.coefficients or not (set(self.dag[node]) & changed):
                continue
            values = self._design(node, out) @ self.coefficients[node].to_numpy() + noise[node].to_numpy()
            if clip:
                values = np.clip(values, *self.ranges[node])
            if decimals and node in decimals:
                values = np.round(values, decimals[node])
            out[node] = values
            changed.add(node)
        return out


def fit_linear_scm(data: pd.DataFrame, dag: Mapping[str, Sequence[str]]) -> LinearSCM:
    """Least-squares fit of every node with parents; ``dag`` maps node -> list of parents."""
    graph = {node: list(parents) for node, parents in dag.items()}
    order = topological_order(graph)
    missing = [n for n in order if n not in data.columns]
    if missing:
        raise DAGError(f"DAG node(s) {missing} are not columns of the data")
    levels = {
        n: sorted(pd.unique(data[n]).tolist(), key=str) for n in order if not pd.api.types.is_numeric_dtype(data[n])
    }
    scm = LinearSCM(graph, order, {}, levels, {})
    for node in order:
        if not graph.get(node):
            continue
        if node in levels:
            raise DAGError(f"{node} has parents but is categorical: only continuous nodes can be modelled")
        x = scm._design(node, data)
        coef, *_ = np.linalg.lstsq(x, data[node].to_numpy(float), rcond=None)
        names = ["intercept"] + [
            f"{p}={lv}" if p in levels else p for p in graph[node] for lv in (levels[p][1:] if p in levels else [None])
        ]
        scm.coefficients[node] = pd.Series(coef, index=names)
        scm.ranges[node] = (float(data[node].min()), float(data[node].max()))
    for node in graph:
        graph.setdefault(node, [])
    return scm
