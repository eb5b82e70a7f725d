"""Pair comparable: should subjects A and B be treated alike? Yes/no, optional 5-point strength
("How sure are you?") and optional BTS prediction of the share answering "Yes"."""

from django import forms

from tasks.agree import BinaryTaskForm, binary_extras, bts_prompt
from tasks.base import TaskType
from tasks.fields import YES_NO
from tasks.pair_distance import _distance, _names

# logit P(yes) = COMPARABLE_SLOPE * (1/2 - d) + leniency + noise, d the share of differing values
COMPARABLE_SLOPE = 4.0


class PairComparable(TaskType):
    kinds = ("pair_comparable",)
    columns = {
        "comparable": "1 if the participant says the two subjects should be treated alike, else 0.",
        "strength": "How sure the participant is (1 = not at all, 5 = completely).",
        "prediction": 'BTS prediction: percentage of other participants expected to answer "Yes".',
    }

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
