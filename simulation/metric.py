"""Simulated similarity judgements: raters whose fair metric is the pool's scaled features, equally weighted.

The pool's features become scaled columns as ``fairness.human_metric`` scales them (numbers to [0, 1] by
their range, categories as 0/1 indicators); a simulated rater's squared distance is
d(x, y)^2 = TRIPLET_SLOPE * |x - y|^2 / k over the k scaled columns, i.e. ``fit_metric``'s model with
M = (TRIPLET_SLOPE / k) I, and a triplet answer "b is more similar to the anchor" has
logit P = d(anchor, c)^2 - d(anchor, b)^2 (plus the rater's leniency and noise, ``simulation.raters``).
"""

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairness.human_metric import feature_scaling, pool_frame

TRIPLET_SLOPE = 8.0


def pool_features(pool: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Subject id -> its scaled feature vector (empty when the pool has no usable feature)."""
    frame, features = pool_frame(pool)
    if not features:
        return {subject_id: np.zeros(0) for subject_id in frame.index}
    scaled = feature_scaling(frame, features).transform(frame)
    return dict(zip(frame.index, scaled, strict=True))


def triplet_logit(features: dict[str, np.ndarray], anchor: str, b: str, c: str) -> float:
    """logit P(b judged more similar to the anchor than c) = d(anchor, c)^2 - d(anchor, b)^2 (module doc)."""
    x = features[anchor]
    if not len(x):
        return 0.0
    squared = TRIPLET_SLOPE / len(x)
    return float(squared * (np.sum((x - features[c]) ** 2) - np.sum((x - features[b]) ** 2)))
