"""Pair comparable: should subjects A and B be treated alike? Yes/no, optional 5-point strength
("How sure are you?") and optional BTS prediction of the share answering "Yes"."""

import numpy as np
from django import forms

from core.columns import Column
from core.report_texts import GROUP_MEANS, RESAMPLING, Explanation, ReportTable, TableView
from tasks.agree import BinaryTaskForm, binary_extras, bts_prompt
from tasks.base import BlockTask, BtsPositive, BuilderInput, BuilderProblem
from tasks.fields import YES_NO
from tasks.pair_distance import _distance, _names
from tasks.schema import BTS, PAIRS, QUESTION, check_pairs

DEFAULT_COMPARABLE_QUESTION = "Should these two {subject_noun}s be treated alike?"

# logit P(yes) = COMPARABLE_SLOPE * (1/2 - d) + leniency + noise, d the share of differing values
COMPARABLE_SLOPE = 4.0


def gower_distances(features, rows: slice) -> np.ndarray:
    """Gower's (1971) distance of the subjects in ``rows`` to every subject: the mean over the columns of
    |x_i - x_j| / range for numeric columns (0 when the range is 0) and 0/1 (equal / not) for the others."""
    import pandas as pd  # job workers and the builder only

    total = np.zeros((len(range(*rows.indices(len(features)))), len(features)))
    for column in features.columns:
        values = features[column]
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all():
            x = numeric.to_numpy(dtype=float)
            spread = x.max() - x.min()
            if spread > 0:
                total += np.abs(x[rows, None] - x[None, :]) / spread
        else:
            codes = values.astype(str).to_numpy()
            total += codes[rows, None] != codes[None, :]
    return total / len(features.columns)


def draw_pairs(features, ids: list[str], *, seed: int = 0, chunk: int = 512) -> list[dict]:
    """Pairs for ``pair_comparable``: for each subject in CSV order, its nearest neighbour (Gower distance on
    the feature columns; ties: the first in CSV order) and one far neighbour drawn uniformly with
    ``numpy.random.default_rng(seed)`` from the subjects at or beyond the median of its distances (never the
    near one). Each pair records its ``relation`` ("near" / "far"); a pair found twice (A-B and B-A) is kept
    once, where it first appears."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    features = features.reset_index(drop=True)
    pairs, seen = [], set()
    for start in range(0, n, chunk):
        block = gower_distances(features, slice(start, min(n, start + chunk)))
        for offset, distances in enumerate(block):
            i = start + offset
            distances = distances.copy()
            distances[i] = np.inf
            near = int(np.argmin(distances))
            others = np.delete(np.arange(n), [i, near])
            median = np.median(distances[others])
            far_candidates = others[distances[others] >= median]
            far = int(rng.choice(far_candidates))
            for j, relation in ((near, "near"), (far, "far")):
                key = frozenset((ids[i], ids[j]))
                if key not in seen:
                    seen.add(key)
                    pairs.append({"a": ids[i], "b": ids[j], "relation": relation})
    return pairs


PAIRS_SHOWN = 30  # pairs the report's table shows (the CSV has them all)


def divisive_pairs(pairs, limit: int = PAIRS_SHOWN):
    """The per-pair shares (a DataFrame) as one row per pair and one column per rater group, the ``limit``
    pairs on which the rater groups differ most first."""
    from fairness.rater_groups import ALL  # pandas: job workers only

    wide = pairs.pivot_table(index="pair", columns="rater_group", values="share", aggfunc="first")
    groups = [c for c in wide.columns if c != ALL]
    spread = wide[groups].max(axis=1) - wide[groups].min(axis=1)
    wide = wide[[ALL, *groups]].assign(spread=spread).sort_values("spread", ascending=False)
    return wide.head(limit).reset_index().rename_axis(columns=None)


class PairComparable(BlockTask):
    kinds = ("pair_comparable",)
    name = "pair_comparable"
    measures = {
        "comparable": Column("0/1", "1 when the participant says the two should be treated alike."),
        "strength": Column("integer", "How sure the participant is (1 = not at all).", "1..5"),
        "prediction": Column("number", "BTS prediction: percent of others expected to answer 'yes'.", "0..100"),
    }
    options = {**PAIRS, "strength": {"type": "boolean"}, **BTS, **QUESTION}
    needs = ("pairs",)
    item_shape = "pairs"
    shown_as = ("pairs",)
    builder_template = "comparable"
    builder_key = "pairs"
    builder_instructions = (
        "You will read descriptions of two people at a time.\n\n"
        "For each pair, say whether a decision maker should treat the two people alike, and how sure you are. "
        "There are no right or wrong answers: we are interested in your own judgement."
    )
    builder_seconds = 30
    default_bts_prompt = "What percentage of other participants do you think answered 'Yes'?"
    estimators = ("fairness.rater_groups.rater_group_difference_tests",)
    analysis = "fairness.task_blocks.pair_comparable_block"
    report_tables = {
        "shares": ReportTable(
            "share 'treat alike' by rater group",
            {**GROUP_MEANS, "mean": "Share"},
            Explanation(
                "The share of 'should be treated alike' answers over all pairs, for all participants and per rater "
                "group.",
                "A higher share means the group sees more pairs as similar people; the tests table says whether the "
                "groups differ beyond chance.",
                f"share_r = answers 'yes' of group r / answers of group r; {RESAMPLING}",
                "Individual fairness: pairs judged alike are the raw material of learned fairness metrics, Dwork et "
                "al. (2012)",
            ),
            estimate="mean",
        ),
        "pairs": ReportTable(
            "share 'treat alike' per pair",
            {"pair": "Pair", "rater_group": "Rater group", "share": "Share", "n_answers": "Answers"},
            Explanation(
                "The share of 'treat alike' answers for each pair, overall and per rater group.",
                "Pairs near 1 are seen as alike by nearly everyone, near 0.5 divide the raters; few answers per pair "
                "give coarse shares.",
                "share = answers 'yes' / answers, per pair",
                "Individual fairness judgements, Dwork et al. (2012)",
            ),
        ),
        "agreement": ReportTable(
            "agreement among raters (Fleiss' kappa)",
            {"rater_group": "Rater group", "kappa": "Kappa", "n_items": "Pairs", "raters_per_item": "Raters/pair"},
            Explanation(
                "How far raters agree on which pairs should be treated alike, overall and within each rater group.",
                "Kappa 1 is full agreement, 0 no more than chance; it uses the pairs with the most common number of "
                "answers.",
                "Fleiss' kappa = (P_o - P_e) / (1 - P_e) over the yes/no answers per pair",
                "Fleiss (1971); statsmodels fleiss_kappa",
            ),
        ),
    }

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_pairs(block, pool, base, add, memo)

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", DEFAULT_COMPARABLE_QUESTION)
        block.setdefault("strength", False)

    def present(self, name: str, frame) -> TableView:
        """The ``pairs`` table: the pairs that divide the rater groups most (:func:`divisive_pairs`)."""
        if name != "pairs":
            return super().present(name, frame)
        shown = divisive_pairs(frame)
        columns = {c: {"pair": "Pair", "spread": "Spread"}.get(c, c) for c in shown.columns}
        note = f"The {len(shown)} pairs on which the rater groups differ most; every pair is in the CSV."
        return TableView(shown, columns, (note,))

    def builder_block(self, source: BuilderInput) -> dict:
        """Pairs drawn by :func:`draw_pairs` over the feature columns, with "How sure are you?"."""
        template, n, most = self.builder_template, len(source.subjects), source.max_items
        if not len(source.features.columns):
            raise BuilderProblem(
                f"the {template} template needs at least one feature column (besides id, groups and model) to "
                "draw pairs"
            )
        if n < 3:
            raise BuilderProblem(f"the {template} template needs at least 3 subjects; the CSV has {n}")
        pairs = draw_pairs(source.features, [s["id"] for s in source.subjects], seed=0)
        if len(pairs) > most:
            raise BuilderProblem(f"{len(pairs):,} pairs from {n:,} subjects; a block holds at most {most:,}")
        return {"task": self.name, "pairs": pairs, "strength": True}

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """Answering "Yes, treat them alike" (1)."""
        return BtsPositive("comparable", 1, 1) if "bts" in block else None

    def form(self, page: dict, index, data=None) -> forms.Form:
        block = index.block(page)
        noun = index.noun(index.pool_of(page))
        return BinaryTaskForm(
            data,
            page=page,
            question=block["question"].format(subject_noun=noun),
            choices=YES_NO,
            required_message="Answer yes or no.",
            answer_measure="comparable",
            sure_label="How sure are you?" if block["strength"] else None,
            sure_measure="strength",
            prediction_prompt=bts_prompt(block),
        )

    def context(self, page: dict, index) -> dict:
        pair, pool = index.pair(page), index.pool_of(page)["key"]
        names = _names(index, page)
        return {
            "names": names,
            "cards": [index.card(pool, pair[side], name) for side, name in zip("ab", names, strict=True)],
        }

    def simulate(self, page, index, rater, rng) -> dict[str, str]:
        """Yes with logit P = COMPARABLE_SLOPE * (1/2 - d) + leniency + N(0, noise), d the pair's
        difference (``pair_distance._distance``, mean of its two parts)."""
        from simulation.raters import draw_binary

        d = sum(_distance(index, page)) / 2
        answer, p = draw_binary(COMPARABLE_SLOPE * (0.5 - d), rater, rng)
        return binary_extras(self.form(page, index), {"answer": str(answer)}, p, rater, rng)
