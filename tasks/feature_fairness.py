"""Feature fairness: is it fair to use a feature to decide? (Grgic-Hlaca, Redmiles, Gummadi & Weller,
WWW 2018.) The items are feature columns of the pool, not subjects: "Is it fair to use {feature} to decide
{decision}?" on a 7-point scale from "Very unfair" to "Very fair"; with ``properties`` also the eight
latent properties the paper rated, each a statement about "this information" on a 7-point agreement scale
(wording in ``PROPERTY_STATEMENTS``, ours, after the paper's descriptions); an optional BTS follow-up: the
share of other participants judging the use fair (5-7).

Answers (subject_key = the feature's column): ``fair_use`` 1..7; with ``properties`` one answer per
property, its measure the property's name, 1..7. Analysed by ``fairness.feature_fairness``: per feature the
share judging it fair per rater group with the rater-group test, and the latent-property model.
"""

from django import forms
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from core.columns import Column
from core.report_texts import CI_LABEL, RESAMPLING, YES_NO_MEANS, Explanation, ReportTable
from simulation.feature_judgements import PROPERTIES
from tasks.base import AnswerInput, BlockTask, BtsPositive, BuilderInput, BuilderProblem
from tasks.fields import prediction_field, scale_field
from tasks.item_shapes import FEATURES
from tasks.questions import task_question
from tasks.schema import BTS, QUESTION, SHOWN, duplicates, once
from tasks.yields import Yield

DEFAULT_QUESTION = gettext_noop("Is it fair to use {feature} to decide {decision}?")
BUILDER_DECISION = gettext_noop("whether a person is high risk")  # the decision the builder template's question names
FAIR_LABELS = (
    _("Very unfair"),
    _("Unfair"),
    _("Somewhat unfair"),
    _("Neither fair nor unfair"),
    _("Somewhat fair"),
    _("Fair"),
    _("Very fair"),
)
FAIR_FROM = 5  # "Somewhat fair" and above: the positive answer (BTS) and the share judging the use fair
AGREE_LABELS = (
    _("Strongly disagree"),
    _("Disagree"),
    _("Somewhat disagree"),
    _("Neither agree nor disagree"),
    _("Somewhat agree"),
    _("Agree"),
    _("Strongly agree"),
)
PROPERTY_STATEMENTS = {
    "relevance": _("This information is relevant to deciding {decision}."),
    "reliability": _("This information can be assessed reliably."),
    "privacy": _("This information is private or sensitive."),
    "volitionality": _("This information is the result of the person's own choices."),
    "causes_outcome": _("This information causes the outcome the decision is about."),
    "vicious_cycle": _(
        "Using this information could create a vicious cycle that keeps disadvantaged people disadvantaged."
    ),
    "causes_disparity": _("Using this information could lead to unequal outcomes for different social groups."),
    "caused_by_group": _("This information is caused by membership of a social group (such as race or gender)."),
}


def feature_label(block: dict, column: str) -> str:
    """How the page names a feature: its ``label``, else its column name."""
    item = next(f for f in block["features"] if f["column"] == column)
    return item.get("label", column)


class FeatureFairnessForm(forms.Form):
    def __init__(self, *args, page: dict, question: str, block: dict, label: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.page = page
        self.fields["fair_use"] = scale_field(question, FAIR_LABELS)
        if block["properties"]:
            for name in PROPERTIES:
                self.fields[name] = scale_field(
                    str(PROPERTY_STATEMENTS[name]).format(decision=block["decision"]), AGREE_LABELS
                )
        if "bts" in block:
            self.fields["prediction"] = prediction_field(block["bts"]["prompt"].replace("{feature}", label))

    def answers(self) -> list[AnswerInput]:
        block, item = self.page["block"], self.page["item"]
        return [
            AnswerInput(
                task_question(block, item, name), name, set_key=block, subject_key=item, number=self.cleaned_data[name]
            )
            for name in self.fields
        ]


class FeatureFairness(BlockTask):
    name = "feature_fairness"
    kinds = ("feature_fairness",)
    measures = {
        "fair_use": Column(
            "integer",
            "Is it fair to use the feature (subject_key) to decide? 1 = very unfair, 7 = very fair.",
            "1..7",
            bounds=(1, 7),
        ),
        **{
            name: Column(
                "integer",
                f"Latent property '{name}' of the feature (subject_key): agreement with "
                f"'{PROPERTY_STATEMENTS[name]}' (1 = strongly disagree).",
                "1..7",
                bounds=(1, 7),
            )
            for name in PROPERTIES
        },
        "prediction": Column(
            "number",
            "BTS prediction: percent of others expected to judge using the feature fair (5-7).",
            "0..100",
            bounds=(0, 100),
        ),
    }
    options = {**FEATURES.option, "decision": SHOWN, **QUESTION, "properties": {"type": "boolean"}, **BTS}
    needs = ("features", "decision")
    item_shape = FEATURES
    builder_template = "feature_fairness"
    builder_description = (
        "Feature fairness: is it fair to use each feature to decide? (7-point scale, eight properties, BTS)"
    )
    builder_key = "features"
    builder_instructions = gettext_noop(
        "You will be asked about the kinds of information a decision about people could use.\n\n"
        "For each kind of information, say how fair it would be to use it for the decision, and what you think "
        "of the information itself. There are no right or wrong answers: we are interested in your own "
        "judgement."
    )
    builder_seconds = 60
    builder_decision = BUILDER_DECISION
    default_bts_prompt = gettext_noop(
        "What percentage of other participants do you think judged it fair to use {feature}?"
    )
    yields = {Yield.FEATURE_SHARES: "fair_use"}
    estimators = (
        "fairness.feature_fairness.feature_fairness_shares",
        "fairness.feature_fairness.latent_property_model",
    )
    analysis = "tasks.feature_fairness.analyse"
    report_tables = {
        "feature_shares": ReportTable(
            "share judging the use of each feature fair, by rater group",
            {
                "feature": "Feature",
                "rater_group": "Rater group",
                "share": "Share fair",
                "ci": CI_LABEL,
                "n_raters": "Raters",
                "n_answers": "Answers",
            },
            Explanation(
                "For each feature, the share of answers judging it fair to use for the decision (Somewhat fair, "
                "Fair or Very fair), for all participants and per rater group.",
                "A share near 1 means nearly everyone accepts the feature, near 0 that nearly everyone rejects it; "
                "the tests table says, per feature, whether the rater groups differ beyond chance.",
                f"share_r = answers >= {FAIR_FROM} of 7 in group r / answers of group r; {RESAMPLING}",
                "Grgic-Hlaca, Redmiles, Gummadi & Weller (WWW 2018)",
            ),
            estimate="share",
            figure=("feature", "share"),
            procedures=YES_NO_MEANS,
        ),
        "feature_properties": ReportTable(
            "why a feature is judged fair: the latent-property model",
            {
                "term": "Term",
                "statistic": "Log-odds per point",
                "ci": CI_LABEL,
                "standard_error": "SE (by rater)",
                "pvalue": "p",
                "n_judgements": "Judgements",
                "n_raters": "Raters",
            },
            Explanation(
                "How each latent property of a feature, as the participants rated it, goes with judging its use "
                "fair: a logit model of 'fair' on the eight property ratings.",
                "A positive coefficient means that features rated higher on that property are more often judged "
                "fair; the intercept is the log-odds of 'fair' for a feature rated 4 (neither) on every property. "
                "The coefficients are population-averaged (one pooled logit over all raters): when raters differ in "
                "how readily they judge a feature fair, they are attenuated towards 0 relative to one rater's. "
                "Standard errors allow for each rater judging several features.",
                "logit P(fair) = b0 + sum_j b_j (rating_j - 4); CR1 = G/(G-1) rater-clustered sandwich over G raters, "
                "t on G - 1 df",
                "Grgic-Hlaca, Redmiles, Gummadi & Weller (WWW 2018); statsmodels Logit, cov_type='cluster'",
            ),
            estimate="statistic",
            procedures=("latent-property model, population-averaged",),
        ),
    }

    def builder_block(self, source: BuilderInput) -> dict:
        """One item per feature column of the CSV (besides id, groups and model), the decision asked about,
        the eight latent properties and the BTS follow-up."""
        if not len(source.features.columns):
            raise BuilderProblem(
                f"the {self.builder_template} template needs at least one feature column (besides id, groups and "
                "model) to ask about"
            )
        items = [{"column": column} for column in source.features.columns]
        decision = source.decision or gettext(BUILDER_DECISION)
        return {"task": self.name, "features": items, "decision": decision, "properties": True, "bts": {}}

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        """Each feature is a column (feature or group) of every subject and listed once; no stratification."""
        known = once(
            memo,
            (pool["key"], "columns"),
            lambda: set.intersection(*({*s.get("features", {}), *s.get("groups", {})} for s in pool["subjects"])),
        )
        for xi, item in enumerate(block["features"]):
            if item["column"] not in known:
                add(
                    f"{base}.features[{xi}].column",
                    f"{item['column']!r} is not a feature or group column of every subject of pool {pool['key']!r}",
                )
        for dup in duplicates([item["column"] for item in block["features"]]):
            add(f"{base}.features", f"the feature {dup!r} is listed twice")
        if "stratify_by" in block.get("assignment", {}):
            add(f"{base}.assignment.stratify_by", "the items of a feature_fairness block are features, not subjects")

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_QUESTION))
        block.setdefault("properties", False)

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """Judging the use fair (``fair_use`` 5-7)."""
        return BtsPositive("fair_use", FAIR_FROM) if "bts" in block else None

    def form(self, page: dict, index, data=None) -> forms.Form:
        block = index.block(page)
        label = feature_label(block, page["item"])
        question = block["question"].format(feature=label, decision=block["decision"])
        return FeatureFairnessForm(data, page=page, question=question, block=block, label=label)

    def context(self, page: dict, index) -> dict:
        block = index.block(page)
        item = next(f for f in block["features"] if f["column"] == page["item"])
        return {"feature": feature_label(block, page["item"]), "description": item.get("description", "")}

    def simulate(self, page, index, rater, rng) -> dict[str, str]:
        """The ordinal-logit rater of ``simulation.feature_judgements`` (the feature's properties by its
        column, the rater's leniency and noise); the BTS prediction as for the yes/no tasks."""
        from simulation.feature_judgements import draw_feature_judgement, property_means
        from simulation.raters import bts_prediction

        rating, properties, p = draw_feature_judgement(
            property_means(page["item"]), rng, leniency=rater.leniency, noise=rater.noise
        )
        form = self.form(page, index)
        data = {"fair_use": str(rating)}
        if index.block(page)["properties"]:
            data |= {name: str(value) for name, value in zip(PROPERTIES, properties, strict=True)}
        if "prediction" in form.fields:
            data["prediction"] = bts_prediction(p, rater, rng, own=rating >= FAIR_FROM)
        return data


def analyse(spec: dict, block: dict, answers, groups, opts):
    """Per feature the share judging its use fair, overall and per rater group, with the rater-group test
    (``fairness.feature_fairness.feature_fairness_shares``); with ``properties`` the latent-property model
    (``latent_property_model``, all participants)."""

    from analysis.bts import block_answers
    from fairness.feature_fairness import feature_fairness_shares, latent_property_model
    from fairness.task_blocks import BlockAnalysis

    frame = block_answers(answers, block["key"], "fair_use")
    if frame.empty:
        return BlockAnalysis(block["key"], "feature_fairness", {}, ["No feature judgements yet."])
    frame = frame.assign(rater_group=frame["participant_id"].map(groups), feature=frame["subject"])
    shares, tests = feature_fairness_shares(
        frame, n_resamples=opts.n_resamples, n_permutations=opts.n_permutations, seed=opts.seed
    )
    tables = {
        "feature_shares": shares,
        "tests": tests.rename(columns={"feature": "subject_group"}).assign(
            measure="share fair", subject_attribute="feature"
        ),
    }
    notes: list[str] = []
    if block["properties"]:
        wide = frame[["participant_id", "subject", "value"]]
        for name in PROPERTIES:
            ratings = block_answers(answers, block["key"], name)[["participant_id", "subject", "value"]]
            wide = wide.merge(ratings.rename(columns={"value": name}), on=["participant_id", "subject"], how="left")
        try:
            model = latent_property_model(wide, PROPERTIES)
            tables["feature_properties"] = model.coefficients.assign(
                n_judgements=model.n_judgements, n_raters=model.n_raters
            )
        except ValueError as exc:
            notes.append(f"No latent-property model: {exc}.")
    return BlockAnalysis(block["key"], "feature_fairness", tables, notes)
