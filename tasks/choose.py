"""Choose: which of two subjects should receive a decision ("Which of these two people should get the
loan?", WeBuildAI, Lee et al. CSCW 2019): subject A or B, with ``allow_equal`` also "Equally"; an
optional 5-point strength ("How sure are you?"); an optional BTS follow-up when the block names a
``model``: the share of other participants choosing the subject the AI favours (its more favourable score,
``favourable``: "lower" risk by default). The prompt names that subject without saying the AI favours
it (saying so would anchor the choice); the share choosing the first-shown subject would mean nothing.

Answers: ``choice`` = 1 when subject a of the pair (A on the page) is chosen, 0 for b, 0.5 for "Equally"
(text: the chosen subject's id, empty when equal); ``ai_choice`` = 1 when the chosen subject is the one the
AI favours (stored with a BTS follow-up; not when the AI's scores tie or the answer is "Equally").
Analysed by Bradley-Terry strengths of the subjects (``analysis.paired_comparison.bradley_terry``, with
Davidson's ties for "Equally"), for all participants and per rater group, and by utility weights over the
subjects' features with a Borda ranking (``analysis.paired_comparison.utility_model``, WeBuildAI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from core.columns import Column
from core.report_texts import CI_LABEL, Explanation, ReportTable
from tasks.base import Adaptive, AnswerInput, BlockTask, BtsPositive, BuilderInput
from tasks.drawing import PAIR_RELATIONS, drawn_items
from tasks.fields import CONFIDENCE_LABELS, follow_ups, prediction_field, scale_field
from tasks.item_shapes import PAIRS, PairItem
from tasks.nouns import question_text
from tasks.page_index import Block, Page, PageIndex
from tasks.pair_distance import _names
from tasks.questions import task_question
from tasks.schema import BTS, MODEL, QUESTION, SHOWN, check_model, check_pairs
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater

DEFAULT_QUESTION = gettext_noop("Which of these two {subject_nouns} should {decision}?")
BUILDER_DECISION = gettext_noop("be considered lower risk")  # the decision the builder template's question names
EQUALLY = _("Equally / cannot decide")
CHOICE_SLOPE = 4.0  # simulation: logit P(choose a) = CHOICE_SLOPE * (favourable score gap) + leniency + noise


# Why a page of a block with the BTS follow-up has none (the follow-up asks about the AI's favourite).
NO_BTS_ON_A_TIE = gettext_noop(
    "This page has no question about other participants' answers: the AI gives %(a)s and %(b)s the same score, "
    "so neither is its favourite to ask about."
)


def favoured(block: Block, scores: tuple[float | None, float | None]) -> str | None:
    """``"a"`` or ``"b"``: the subject of the pair whose model score is more favourable; None on a tie."""
    a, b = scores
    if a is None or b is None or a == b:
        return None
    lower_first = (a < b) == (block["favourable"] == "lower")
    return "a" if lower_first else "b"


class ChoiceForm(forms.Form):
    def __init__(self, *args, page: Page, pair: PairItem, question: str, names, block: Block, ai: str | None, **kwargs):
        super().__init__(*args, **kwargs)
        self.page, self.pair, self.ai = page, pair, ai
        choices = [("a", names[0]), ("b", names[1])] + ([("equal", EQUALLY)] if block["allow_equal"] else [])
        message = (
            gettext("Choose one of the two, or Equally.") if block["allow_equal"] else gettext("Choose one of the two.")
        )
        self.fields["choice"] = forms.ChoiceField(
            label=question,
            choices=choices,
            widget=forms.RadioSelect,
            error_messages={"required": message, "invalid_choice": message},
        )
        sure, prediction = follow_ups(block, ai)
        if sure:
            self.fields["sure"] = scale_field(gettext("How sure are you?"), CONFIDENCE_LABELS)
        if prediction:
            name = names[0] if ai == "a" else names[1]
            self.fields["prediction"] = prediction_field(block["bts"]["prompt"].replace("{favoured}", name))

    def answers(self) -> list[AnswerInput]:
        block, item, chosen = self.page["block"], self.page["item"], self.cleaned_data["choice"]

        def answer(measure: str, number: float, text: str = "") -> AnswerInput:
            question = task_question(block, item, measure)
            return AnswerInput(question, measure, set_key=block, subject_key=item, number=number, text=text)

        value = {"a": 1.0, "b": 0.0, "equal": 0.5}[chosen]
        out = [answer("choice", value, {"a": self.pair["a"], "b": self.pair["b"]}.get(chosen, ""))]
        if "sure" in self.fields:
            out.append(answer("strength", self.cleaned_data["sure"]))
        if "prediction" in self.fields:
            out.append(answer("prediction", self.cleaned_data["prediction"]))
            if chosen != "equal":
                out.append(answer("ai_choice", float(chosen == self.ai)))
        return out


def _scores(index: PageIndex, page: Page) -> tuple[float | None, float | None]:
    block, pair = index.block(page), index.pair(page)
    if not block.get("model"):
        return None, None
    a, b = (index.model_output(block["pool"], side, block["model"]).get("score") for side in (pair["a"], pair["b"]))
    return a, b


class Choose(BlockTask):
    name = "choose"
    kinds = ("choose",)
    measures = {
        "choice": Column(
            "number",
            "1 when the participant chose subject a of the pair, 0 for b, 0.5 for 'Equally'.",
            "0, 0.5, 1",
            levels=(0, 0.5, 1),
        ),
        "ai_choice": Column(
            "0/1", "1 when the chosen subject is the one the AI's score favours (choose blocks with BTS)."
        ),
        "strength": Column("integer", "How sure the participant is (1 = not at all).", "1..5", bounds=(1, 5)),
        "prediction": Column(
            "number",
            "BTS prediction: percent of others expected to choose the AI's favourite.",
            "0..100",
            bounds=(0, 100),
        ),
    }
    options = {
        **PAIRS.option,
        "decision": SHOWN,
        **QUESTION,
        "allow_equal": {"type": "boolean"},
        "strength": {"type": "boolean"},
        **MODEL,
        "favourable": {"enum": ["lower", "higher"]},
        **BTS,
    }
    needs = ("pairs", "decision")
    item_shape = PAIRS
    builder_template = "choice"
    builder_description = "Choice: which of these two people should receive the decision? (A/B, how sure, BTS)"
    builder_key = "choices"
    builder_instructions = gettext_noop(
        "You will read descriptions of two people at a time.\n\n"
        "For each pair, choose which of the two should receive the decision, and say how sure you are. "
        "There are no right or wrong answers: we are interested in your own judgement."
    )
    builder_seconds = 25
    builder_relations = PAIR_RELATIONS
    builder_mix = ("near", "far")
    builder_decision = BUILDER_DECISION
    builder_allows_tie = True  # "Equally": Davidson's ties in the Bradley-Terry fit (analyse)
    adaptive = Adaptive("choice", "analysis.adaptive_design.choice_fit", "choice")
    default_bts_prompt = gettext_noop("What percentage of other participants do you think chose {favoured}?")
    yields = {Yield.STRENGTHS: "choice", Yield.UTILITIES: "choice"}
    estimators = ("analysis.paired_comparison.bradley_terry", "analysis.paired_comparison.utility_model")
    weighs_features = True
    analysis = "tasks.choose.analyse"
    report_tables = {
        "strengths": ReportTable(
            "Bradley-Terry strengths of the subjects by rater group",
            {
                "rater_group": "Rater group",
                "subject": "Subject",
                "strength": "Strength",
                "ci": CI_LABEL,
                "standard_error": "SE",
                "n_comparisons": "Choices",
                "note": "Note",
            },
            Explanation(
                "How strongly each rater group prefers each subject for the decision, from their pairwise choices: "
                "the log-odds scale of the Bradley-Terry model, the first subject (in sorted order) at 0.",
                "A subject with a higher strength is chosen more often over the others; a difference of 1 means odds "
                "of e = 2.7 to 1 of choosing the stronger. Compare rater groups subject by subject. A strength and its "
                "CI are for s_i - s_reference, the difference from the reference subject (0, no CI). The strengths are "
                "population-averaged: fitted to all of a group's choices at once, they are attenuated towards 0 "
                "when raters differ among themselves (a single rater's preferences are sharper). The CIs are "
                "clustered by rater (a rater makes many choices), so a group needs at least two raters.",
                "P(i chosen over j) = exp(s_i) / (exp(s_i) + exp(s_j)); with 'Equally': Davidson's nu sqrt(p_i p_j); "
                "CI of s_i - s_ref: -/+ t(G - 1) SE, CR1 = G/(G-1) rater-clustered sandwich over G raters",
                "Bradley & Terry (1952); Davidson (1970); Liang & Zeger (1986); WeBuildAI, Lee et al. (CSCW 2019)",
            ),
            estimate="strength",
            figure=("subject", "strength"),
            headline="strength",
            procedures=("strengths, rater-clustered",),
        ),
        "utility_weights": ReportTable(
            "utility weights of the subjects' features by rater group",
            {
                "rater_group": "Rater group",
                "feature": "Feature",
                "weight": "Weight",
                "ci": CI_LABEL,
                "standard_error": "SE (clustered)",
                "pvalue": "p",
                "n_raters": "Raters",
                "n_comparisons": "Choices",
            },
            Explanation(
                "How much each feature of a subject (in standard deviations over the pool; a two-valued feature as "
                "0/1 for its second value) moves a rater group's choices: WeBuildAI's utility model, a Bradley-Terry "
                "model whose strengths are a linear function of the features.",
                "A positive weight: raters choose the subject with more of the feature for the decision; a weight of "
                "1 multiplies the odds of choosing a subject by e = 2.7 per standard deviation. CIs and p-values "
                "resample nothing but use rater-clustered standard errors (t with raters - 1 df), so a rater's "
                "choices count as one unit; the weight is the raters' population-averaged one. 'Equally' answers "
                "and features collinear with others (named in the notes) are left out.",
                "P(s chosen over t) = expit(w . (x_s - x_t)); pooled logit MLE; CR1 = G/(G-1) rater-clustered sandwich "
                "over G raters, t on G - 1 df",
                "WeBuildAI, Lee et al. (CSCW 2019); Bradley & Terry (1952); Liang & Zeger (1986)",
            ),
            estimate="weight",
            figure=("feature", "weight"),
            procedures=("utility weights, population-averaged",),
        ),
        "borda": ReportTable(
            "Borda ranking of the subjects from each rater's fitted utility model",
            {
                "rater_group": "Rater group",
                "rank": "Rank",
                "subject": "Subject",
                "borda": "Borda points",
                "ci": CI_LABEL,
                "n_raters": "Raters",
            },
            Explanation(
                "Each rater's own utility model (ridge-penalised, prior N(0, 1) per weight) ranks every subject of "
                "the block; a subject's Borda points are the number of subjects ranked below it, averaged over a "
                "rater group's raters (WeBuildAI's aggregation of the stakeholders' models).",
                "Rank 1 is the subject the group's raters would choose first for the decision. What the CI covers: "
                "the mean Borda points of the rankings the utility model fits to raters like these from as many "
                "choices each as they made here (BCa bootstrap over raters). It is not the Borda count of the "
                "raters' true preferences: fitted from a few choices and shrunk by the prior, a rater's ranking is "
                "noisier, so these points are less spread out than the true-preference points, and the target moves "
                "with the number of choices per rater and the penalty.",
                "Borda_s = mean over raters r of #{t: w_r . x_t < w_r . x_s} (ties 1/2), w_r the rater's ridge fit",
                "WeBuildAI, Lee et al. (CSCW 2019); Borda (1781); Efron (1987) for BCa",
            ),
            estimate="borda",
            procedures=("Borda points of the fitted rankings",),
        ),
    }

    def builder_block(self, source: BuilderInput) -> dict:
        """Pairs drawn by :func:`tasks.drawing.draw_pairs`, the decision asked about, "How sure are you?",
        "Equally / cannot decide" with ``--allow-tie`` and, when the CSV has the model's scores, the BTS
        follow-up on choosing the AI's favourite."""
        block = {"task": self.name, "pairs": drawn_items(self, source, "pairs"), "strength": True}
        if source.allow_tie:
            block["allow_equal"] = True
        block["decision"] = source.decision or gettext(BUILDER_DECISION)
        if any("score" in s["models"].get(source.model, {}) for s in source.subjects):
            block.update(model=source.model, bts={})
        return block

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_pairs(block, pool, base, add, memo)
        if "model" in block:
            check_model(block, pool, base, add, "score", memo)
        elif "bts" in block:
            add(f"{base}.bts", "the BTS follow-up asks for the share choosing the subject the AI favours: name a model")

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_QUESTION))
        block.setdefault("allow_equal", False)
        block.setdefault("strength", False)
        block.setdefault("favourable", "lower")

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """Choosing the subject the AI favours (``ai_choice`` = 1)."""
        return BtsPositive("ai_choice", 1, 1) if "bts" in block else None

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        block = index.block(page)
        question = question_text(block["question"], index.pool_of(page), decision=block["decision"])
        ai = favoured(block, _scores(index, page))
        return ChoiceForm(
            data, page=page, pair=index.pair(page), question=question, names=_names(index, page), block=block, ai=ai
        )

    def answer_bounds(self, page: Page, index: PageIndex) -> tuple[int, int]:
        """One answer per field, and with the BTS prediction also ``ai_choice`` (not after "Equally")."""
        form = self.form(page, index)
        low, high = super().answer_bounds(page, index)
        return low, high + ("prediction" in form.fields)

    def context(self, page: Page, index: PageIndex) -> dict:
        pair, pool = index.pair(page), index.pool_of(page)["key"]
        names, block = _names(index, page), index.block(page)
        return {
            "names": names,
            "decision": block["decision"],
            "bts_note": gettext(NO_BTS_ON_A_TIE) % {"a": names[0], "b": names[1]}
            if "bts" in block and favoured(block, _scores(index, page)) is None
            else "",
            "cards": [index.card(pool, side, name) for side, name in zip((pair["a"], pair["b"]), names, strict=True)],
        }

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """A chosen with logit P = CHOICE_SLOPE * (the favourable gap of the AI's scores, 0 without a model) +
        leniency + N(0, noise); "Equally" (when allowed) if that P is within 0.1 of 1/2; strength and the BTS
        prediction (of choosing the AI's favourite) as for the yes/no tasks (``simulation.raters``)."""
        from simulation.raters import bts_prediction, draw_binary, draw_sureness

        block, scores = index.block(page), _scores(index, page)
        a, b = scores
        gap = 0.0 if a is None or b is None else (b - a) * (1 if block["favourable"] == "lower" else -1)
        answer, p = draw_binary(CHOICE_SLOPE * gap, rater, rng)
        ai = favoured(block, scores)
        sure, prediction = follow_ups(block, ai)  # the page form's fields, without building it (the server's does)
        data = {"choice": "equal" if block["allow_equal"] and abs(p - 0.5) < 0.1 else "ab"[1 - answer]}
        if sure:
            data["sure"] = draw_sureness(p, rng)
        if prediction:
            p_ai = p if ai == "a" else 1 - p
            data["prediction"] = bts_prediction(p_ai, rater, rng, own=data["choice"] == ai)
        return data


def analyse(spec: dict, block: dict, answers, groups, opts):
    """Bradley-Terry strengths of the block's subjects (``analysis.paired_comparison.bradley_terry``; "Equally"
    as Davidson ties) from all participants' choices and from each rater group's, with rater-clustered CIs
    (``cluster="rater"``: t on raters - 1 df); a group whose choices do not connect the subjects, leave one
    never chosen or always chosen, or come from one rater, gets the estimator's reason."""
    from analysis.bts import block_answers
    from analysis.paired_comparison import bradley_terry_by_group, utility_model
    from fairness.task_blocks import BlockAnalysis

    frame = block_answers(answers, block["key"], "choice")
    if frame.empty:
        return BlockAnalysis(block["key"], "choose", {}, ["No choices yet."])
    comparisons = choices_of(frame, groups)
    strengths = bradley_terry_by_group(comparisons, item="subject")
    tables, notes = {"strengths": strengths.table}, list(strengths.notes)
    subjects, features, dropped = feature_matrix(spec, block)
    if dropped:
        notes.append(left_out_note(dropped))
    if not features:
        notes.append("No utility model: the pool's subjects have no numeric or two-valued feature that varies.")
        return BlockAnalysis(block["key"], "choose", tables, notes)
    utilities = utility_model(
        comparisons, subjects, features, by="rater_group", n_resamples=opts.n_resamples, seed=opts.seed
    )
    notes += [f"Utility model, {note}" for note in utilities.notes]
    if utilities.n_ties_dropped:
        notes.append(f"The utility model leaves out the {utilities.n_ties_dropped} 'Equally' answers.")
    tables["utility_weights"] = utilities.weights
    tables["borda"] = utilities.borda
    return BlockAnalysis(block["key"], "choose", tables, notes)


def choices_of(frame, groups):
    """A ``choose`` block's "choice" answers (``analysis.bts.block_answers``: participant_id, subject "a~b",
    value 1 = a, 0 = b, 0.5 = "Equally") as comparisons: winner, loser, tie, rater_group, rater."""
    import pandas as pd

    pairs = frame["subject"].str.split("~", expand=True)
    chose_a = frame["value"] >= 0.5
    return pd.DataFrame(
        {
            "winner": pairs[0].where(chose_a, pairs[1]),
            "loser": pairs[1].where(chose_a, pairs[0]),
            "tie": (frame["value"] == 0.5).astype(int),
            "rater_group": frame["participant_id"].map(groups),
            "rater": frame["participant_id"],
        }
    )


def feature_matrix(spec: dict, block: dict):
    """The block's pool as a subjects x features frame for ``utility_model``: numeric features and
    two-valued ones (0/1 for the second value in sorted order, named ``feature=value``), each as z-scores
    over the pool; a feature that does not vary, has more than two text values or is collinear with the
    features before it (in the pool's order) is left out. Returns (frame, features, left out: name -> why,
    in the words of ``LEFT_OUT``)."""
    import numpy as np
    import pandas as pd

    raw = pool_features(spec, block)
    columns: dict[str, pd.Series] = {}
    dropped: dict[str, str] = {}
    for name in raw.columns:
        values = raw[name]
        number = pd.to_numeric(values, errors="coerce")
        levels = sorted(values.dropna().astype(str).unique())
        if number.notna().all() and number.nunique() > 1:
            columns[name] = number.astype(float)
        elif values.notna().all() and len(levels) == 2:
            columns[f"{name}={levels[1]}"] = (values.astype(str) == levels[1]).astype(float)
        else:
            dropped[name] = LEFT_OUT["missing" if values.isna().any() else "constant" if len(levels) < 2 else "text"]
    kept: list[str] = []
    for name in columns:
        candidate = np.column_stack([columns[k] for k in [*kept, name]])
        centred = candidate - candidate.mean(axis=0)
        if np.linalg.matrix_rank(centred) == len(kept) + 1:
            kept.append(name)
        else:
            dropped[name] = LEFT_OUT["collinear"]
    return coded_like_pool(raw, kept, raw), kept, dropped


LEFT_OUT = {  # why feature_matrix leaves a feature out of the utility model
    "missing": "some subjects have no value",
    "constant": "the same for every subject",
    "text": "text with more than two values",
    "collinear": "determined by the features before it",
}


def left_out_note(dropped: dict[str, str]) -> str:
    """The report's sentence on the features the utility model leaves out, each with why."""
    return "The utility model leaves out " + "; ".join(f"{name} ({why})" for name, why in dropped.items()) + "."


def pool_features(spec: dict, block: dict):
    """The raw feature columns of the block's pool (one row per subject, indexed by id)."""
    import pandas as pd

    pool = next(p for p in spec["pools"] if p["key"] == block["pool"])
    return pd.DataFrame(
        [s.get("features", {}) for s in pool["subjects"]], index=[str(s["id"]) for s in pool["subjects"]]
    )


def coded_like_pool(raw, names: list[str], subjects):
    """The columns ``names`` of :func:`feature_matrix` (``feature`` or ``feature=value``) for the rows of
    ``subjects`` (raw feature columns), z-scored by the pool's (``raw``) means and standard deviations, so
    that utilities fitted on the pool apply to other subjects. ValueError naming a missing column or a
    value that is not a number."""
    import pandas as pd

    def coded(frame, name: str):
        column, _, value = name.partition("=")
        column = name if name in raw.columns else column
        if column not in frame.columns:
            raise ValueError(f"column {column!r} (a feature of the utility model) is missing")
        if column == name:
            numbers = pd.to_numeric(frame[column], errors="coerce")
            if numbers.isna().any():
                raise ValueError(f"column {column!r} must be a number for every subject")
            return numbers.astype(float)
        return (frame[column].astype(str) == value).astype(float)

    out = pd.DataFrame({name: coded(subjects, name) for name in names}, index=subjects.index)
    reference = pd.DataFrame({name: coded(raw, name) for name in names}, index=raw.index)
    return (out - reference.mean()) / reference.std(ddof=0)
