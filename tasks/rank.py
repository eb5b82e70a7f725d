"""Rank: a participant orders 3-5 subjects from most to least deserving of a decision ("Rank these defendants
by who should be released before trial"). One rank select per subject, beside its profile (no script needed);
the ranks must be a permutation of 1..m, and a rank given twice is refused naming the subjects, keeping
what was chosen.

Answers: one ``rank`` per subject of the ranking (1 = most deserving; text: the ranking's item id, so the
answers table has one row per (ranking, subject)). Analysed by Plackett-Luce strengths of the subjects
(``analysis.paired_comparison.plackett_luce``), for all participants and per rater group, with
rater-clustered intervals.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from django import forms
from django.utils.translation import gettext, gettext_noop

from core.columns import Column
from core.report_texts import CI_LABEL, Explanation, ReportTable
from tasks.base import AnswerInput, BlockTask, BuilderInput, BuilderProblem
from tasks.choose import BUILDER_DECISION, CHOICE_SLOPE
from tasks.item_shapes import RANKINGS
from tasks.labels import page_labels
from tasks.nouns import question_text
from tasks.page_index import Block, Card, Page, PageIndex
from tasks.questions import task_question
from tasks.schema import MODEL, QUESTION, SHOWN, check_model, duplicates, once
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater

DEFAULT_QUESTION = gettext_noop("Rank these {subject_nouns} by who should {decision}.")
RANKING_SIZE = 4  # subjects per ranking the builder template draws
STRENGTH_COLUMNS = {
    "rater_group": "Rater group",
    "subject": "Subject",
    "strength": "Strength",
    "ci": CI_LABEL,
    "standard_error": "SE",
    "n_rankings": "Rankings",
    "note": "Note",
}


def rank_choices(n: int) -> list[tuple[str, str]]:
    """The ranks 1..n of a ranking of n, the first and last saying what they mean."""
    out = [("", gettext("Choose a rank"))]
    for rank in range(1, n + 1):
        text = str(rank)
        if rank == 1:
            text = gettext("1 (most deserving)")
        elif rank == n:
            text = gettext("%(n)d (least deserving)") % {"n": n}
        out.append((str(rank), text))
    return out


class RankForm(forms.Form):
    """``rank_<i>`` for the i-th subject shown (0-based); ``rows()`` pairs each with its profile card."""

    def __init__(self, *args, page: Page, subjects: list[str], names: list[str], cards: list[Card], **kwargs):
        super().__init__(*args, **kwargs)
        self.page, self.subjects, self.names, self.cards = page, subjects, names, cards
        n = len(subjects)
        for i, name in enumerate(names):
            message = gettext("Give %(name)s a rank from 1 to %(n)d.") % {"name": name, "n": n}
            self.fields[f"rank_{i}"] = forms.TypedChoiceField(
                label=gettext("Rank of %(name)s") % {"name": name},
                choices=rank_choices(n),
                coerce=int,
                error_messages={"required": message, "invalid_choice": message},
            )

    def rows(self) -> list[tuple[Card, forms.BoundField]]:
        return [(card, self[f"rank_{i}"]) for i, card in enumerate(self.cards)]

    def clean(self):
        data = super().clean()
        given = defaultdict(list)  # rank -> the positions given it
        for i in range(len(self.subjects)):
            if (rank := data.get(f"rank_{i}")) is not None:
                given[rank].append(i)
        for rank, shared in sorted(given.items()):
            if len(shared) > 1:
                who = ", ".join(self.names[i] for i in shared)
                message = gettext("Each rank goes to one person: you gave rank %(rank)d to %(who)s.") % {
                    "rank": rank,
                    "who": who,
                }
                for i in shared:
                    self.add_error(f"rank_{i}", message)
        return data

    def answers(self) -> list[AnswerInput]:
        block, item = self.page["block"], self.page["item"]
        return [
            AnswerInput(
                task_question(block, item, "rank", subject),
                "rank",
                set_key=block,
                subject_key=subject,
                number=float(self.cleaned_data[f"rank_{i}"]),
                text=item,
            )
            for i, subject in enumerate(self.subjects)
        ]


def check_rankings(block: dict, pool: dict, base: str, add, memo: dict) -> None:
    """Each ranking's subjects are in the pool and differ; no ranking lists the same subjects as another."""
    ids = once(memo, (pool["key"], "ids"), lambda: {s["id"] for s in pool["subjects"]})
    for ri, ranking in enumerate(block["rankings"]):
        for si, subject in enumerate(ranking["subjects"]):
            if subject not in ids:
                add(f"{base}.rankings[{ri}].subjects[{si}]", f"subject {subject!r} is not in pool {pool['key']!r}")
        if len(set(ranking["subjects"])) < len(ranking["subjects"]):
            add(f"{base}.rankings[{ri}]", "a ranking lists each subject once")
    for dup in duplicates([" / ".join(sorted(r["subjects"])) for r in block["rankings"]]):
        add(f"{base}.rankings", f"the ranking of {dup} is listed twice")


def draw_rankings(ids: list[str], *, size: int, seed: int = 0) -> list[dict]:
    """For each subject in CSV order, one ranking of it and ``size`` - 1 others drawn uniformly without
    replacement (``numpy.random.default_rng(seed)``), shown in random order; a set of subjects found twice
    is kept once."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rankings, seen = [], set()
    for i in range(len(ids)):
        others = rng.choice(np.delete(np.arange(len(ids)), i), size - 1, replace=False)
        shown = [ids[j] for j in rng.permutation([i, *others])]
        if frozenset(shown) not in seen:
            seen.add(frozenset(shown))
            rankings.append({"subjects": shown})
    return rankings


def _view(index: PageIndex, page: Page) -> tuple[list[str], list[str], Block]:
    """The ranking's subjects in page order, what the page calls them and the block."""
    subjects = list(index.ranking(page)["subjects"])
    return subjects, page_labels(index, page, len(subjects)), index.block(page)


class Rank(BlockTask):
    name = "rank"
    kinds = ("rank",)
    measures = {
        "rank": Column(
            "integer",
            "The rank the participant gave the subject in the ranking (1 = most deserving of the decision); one "
            "answer per subject, its text the ranking (subject ids joined by ~).",
            "1..5",
            bounds=(1, 5),
        ),
    }
    options = {
        **RANKINGS.option,
        "decision": SHOWN,
        **QUESTION,
        **MODEL,
        "favourable": {"enum": ["lower", "higher"]},
    }
    needs = ("rankings", "decision")
    item_shape = RANKINGS
    builder_template = "rank"
    builder_description = "Ranking: order 3-5 people from most to least deserving of the decision"
    builder_key = "rankings"
    builder_instructions = gettext_noop(
        "You will read descriptions of a few people at a time.\n\n"
        "For each group, rank the people from the one who most deserves the decision (1) to the one who least "
        "deserves it. There are no right or wrong answers: we are interested in your own judgement."
    )
    builder_seconds = 45
    builder_decision = BUILDER_DECISION
    estimators = ("analysis.paired_comparison.plackett_luce",)
    yields = {Yield.STRENGTHS: "rank"}
    analysis = "tasks.rank.analyse"
    report_tables = {
        "rank_strengths": ReportTable(
            "Plackett-Luce strengths of the subjects by rater group (rankings)",
            STRENGTH_COLUMNS,
            Explanation(
                "How strongly each rater group ranks each subject towards the top for the decision: the log scale "
                "of the Plackett-Luce model, the first subject (in sorted order) at 0.",
                "A subject with a higher strength is ranked above the others more often; a difference of 1 means "
                "odds of e = 2.7 to 1 of placing the stronger first of the two. A strength and its CI are for "
                "s_i - s_reference (the reference: 0, no CI). The strengths are population-averaged (fitted to all "
                "of a group's rankings at once); the CIs are clustered by rater, so a group needs two raters.",
                "P(ranking i_1 > ... > i_m) = prod_p exp(s_(i_p)) / sum_(q >= p) exp(s_(i_q)); CI of s_i - s_ref: "
                "-/+ t(G - 1) SE, CR1 = G/(G-1) rater-clustered sandwich over G raters",
                "Luce (1959); Plackett (1975); Hunter (2004); Liang & Zeger (1986)",
            ),
            estimate="strength",
            figure=("subject", "strength"),
            headline="strength",
            procedures=("Plackett-Luce strengths, rater-clustered",),
        )
    }

    def builder_block(self, source: BuilderInput) -> dict:
        """Rankings of RANKING_SIZE subjects (:func:`draw_rankings`), the decision asked about and, when the CSV
        has the model's scores, the model (its favourable scores drive the simulated raters)."""
        n = len(source.subjects)
        if n < RANKING_SIZE:
            raise BuilderProblem(
                f"the {self.builder_template} template needs at least {RANKING_SIZE} subjects; the CSV has {n}"
            )
        rankings = draw_rankings([s["id"] for s in source.subjects], size=RANKING_SIZE)
        if len(rankings) > source.max_items:
            raise BuilderProblem(
                f"{len(rankings):,} rankings from {n:,} subjects; a block holds at most {source.max_items:,}"
            )
        block = {"task": self.name, "rankings": rankings, "decision": source.decision or gettext(BUILDER_DECISION)}
        if any("score" in s["models"].get(source.model, {}) for s in source.subjects):
            block["model"] = source.model
        return block

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_rankings(block, pool, base, add, memo)
        if "model" in block:
            check_model(block, pool, base, add, "score", memo)

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_QUESTION))
        block.setdefault("favourable", "lower")

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        subjects, names, block = _view(index, page)
        cards = [index.card(block["pool"], s, name) for s, name in zip(subjects, names, strict=True)]
        return RankForm(data, page=page, subjects=subjects, names=names, cards=cards)

    def context(self, page: Page, index: PageIndex) -> dict:
        subjects, names, block = _view(index, page)
        return {
            "question": question_text(block["question"], index.pool_of(page), decision=block["decision"]),
            "how": gettext("Give each a different rank: 1 for the most deserving, %(n)d for the least.")
            % {"n": len(subjects)},
        }

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """A Plackett-Luce rater: utilities u_j = CHOICE_SLOPE * (the favourable side of the AI's score, 0
        without a model) + N(0, noise) per subject, ranked by u_j + Gumbel(0, 1) noise (the Gumbel-max draw of
        a Plackett-Luce ranking with strengths u; Yellott 1977)."""
        subjects, _, block = _view(index, page)
        sign = 1 if block["favourable"] == "lower" else -1
        utility = [
            -sign * CHOICE_SLOPE * index.model_output(block["pool"], s, block["model"])["score"]
            if "model" in block
            else 0.0
            for s in subjects
        ]
        drawn = [u + rng.normal(0, rater.noise) + rng.gumbel() for u in utility]
        order = sorted(range(len(subjects)), key=lambda i: -drawn[i])
        return {f"rank_{i}": str(order.index(i) + 1) for i in range(len(subjects))}


def rankings_of(frame, groups):
    """A rank block's ``rank`` answers (``analysis.bts.block_answers``: participant_id, subject, value = rank,
    text = the ranking) as ``plackett_luce``'s frame: ranking (participant and ranking), item, rank, rater,
    rater_group."""
    return frame.assign(
        ranking=frame["participant_id"].astype(str) + "/" + frame["text"],
        item=frame["subject"],
        rank=frame["value"].astype(int),
        rater=frame["participant_id"],
        rater_group=frame["participant_id"].map(groups),
    )[["ranking", "item", "rank", "rater", "rater_group"]]


def analyse(spec: dict, block: dict, answers, groups, opts):
    """Plackett-Luce strengths of the block's subjects (``analysis.paired_comparison.plackett_luce``) from all
    participants' rankings and from each rater group's, with rater-clustered CIs (t on raters - 1 df); a group
    whose rankings leave a subject never ranked above or below the others, or come from one rater, gets the
    estimator's reason."""
    from analysis.bts import block_answers
    from analysis.paired_comparison import plackett_luce, strengths_by_group
    from fairness.task_blocks import BlockAnalysis

    frame = block_answers(answers, block["key"], "rank")
    if frame.empty:
        return BlockAnalysis(block["key"], "rank", {}, ["No rankings yet."])
    strengths = strengths_by_group(
        rankings_of(frame, groups),
        lambda part: plackett_luce(part, cluster="rater"),
        item="subject",
        count="n_rankings",
        units=lambda part: part["ranking"].nunique(),
    )
    return BlockAnalysis(block["key"], "rank", {"rank_strengths": strengths.table}, list(strengths.notes))
