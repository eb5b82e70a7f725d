"""Fair scores (``fair_score`` blocks; a converted format 1 file's ``output`` pages): the AI's risk score of a
reference subject K, accepted or corrected, then a fair score and a rationale per comparison subject.

Risk scores are entered as percentages (0-100, as the pages show them) and stored as fractions
in [0, 1], the scale of the model's risk score and of the output-space distance D.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from django import forms
from django.utils.translation import gettext, gettext_noop

from core.columns import Column
from tasks import questions
from tasks.base import AnswerInput, BlockTask
from tasks.fields import score_field
from tasks.item_shapes import SETS
from tasks.labels import page_labels
from tasks.schema import MODEL, PAGE_KEY, SHOWN, check_model, duplicates, once
from tasks.yields import Yield


class FairScoreForm(forms.Form):
    """``key(name, subject)`` builds an answer's question key (``subject`` '' for K's answers)."""

    def __init__(
        self,
        *args,
        reference: str,
        subjects: list[str],
        set_key: str,
        key: Callable[[str, str], str],
        labels: dict[str, str],
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.reference, self.subjects, self.set_key, self.key = reference, subjects, set_key, key
        name = labels[reference]  # what the page calls the reference (never its id)
        self.reference_name = name
        self.fields["k_decision"] = forms.ChoiceField(
            label=gettext("Do you accept the AI's risk score for %(name)s?") % {"name": name},
            choices=[
                ("accept", gettext("Accept the AI's score")),
                ("correct", gettext("Correct it with my own score")),
            ],
            widget=forms.RadioSelect,
            error_messages={
                "required": gettext("Say whether you accept the AI's score for %(name)s.") % {"name": name}
            },
        )
        self.fields["k_score"] = score_field(
            gettext("Your risk score for %(name)s (0-100)") % {"name": name}, required=False
        )
        if self.is_bound and self.data.get(self.add_prefix("k_decision")) == "accept":
            # The AI's score is accepted: the box does not count (the page disables and hides it), so a
            # number typed before "Accept" was chosen is ignored, as a disabled field's value is.
            self.fields["k_score"].disabled = True
        for subject in subjects:
            shown = {"name": labels[subject]}
            self.fields[f"score_{subject}"] = score_field(gettext("Fair risk score for %(name)s (0-100)") % shown)
            self.fields[f"rationale_{subject}"] = forms.CharField(
                label=gettext("Why is this score fair for %(name)s?") % shown,
                min_length=5,
                max_length=4000,
                widget=forms.Textarea(attrs={"rows": 2}),
                error_messages={
                    "required": gettext("Write a short rationale for the score of %(name)s.") % shown,
                    "min_length": gettext("Write at least a few words (5 characters or more)."),
                },
            )

    def clean(self):
        data = super().clean()
        if data.get("k_decision") == "correct" and data.get("k_score") is None and "k_score" not in self.errors:
            self.add_error(
                "k_score",
                gettext("You chose to correct the score: enter your risk score for %(name)s (0-100).")
                % {"name": self.reference_name},
            )
        return data

    def answers(self, ai_score: float) -> list[AnswerInput]:
        data, set_key, key = self.cleaned_data, self.set_key, self.key
        accepted = data["k_decision"] == "accept"
        k_score = ai_score if accepted else float(data["k_score"]) / 100
        k_common = {"set_key": set_key, "subject_key": self.reference}
        out = [
            AnswerInput(question=key("k_accept", ""), measure="k_accept", number=1 if accepted else 0, **k_common),
            AnswerInput(question=key("k_score", ""), measure="k_score", number=k_score, **k_common),
        ]
        for subject in self.subjects:
            common: dict[str, Any] = {"set_key": set_key, "subject_key": subject}
            out.append(
                AnswerInput(
                    question=key("fair_score", subject),
                    measure="fair_score",
                    number=float(data[f"score_{subject}"]) / 100,
                    **common,
                )
            )
            out.append(
                AnswerInput(
                    question=key("rationale", subject),
                    measure="rationale",
                    text=data[f"rationale_{subject}"].strip(),
                    **common,
                )
            )
        return out


def _labels(page: dict, index, reference: str, subjects: list[str]) -> dict[str, str]:
    """Subject id -> what the page calls it: the reference "<Noun> A", the comparisons B, C, ... in page order."""
    return dict(zip([reference, *subjects], page_labels(index, page, 1 + len(subjects)), strict=True))


def _set_view(page: dict, index) -> tuple[str, list[str], float]:
    """The reference, the comparison subjects in page order and the AI's score of the reference."""
    sset = index.set(page)
    block = index.block(page)
    score = index.model_output(block["pool"], sset["reference"], block["model"])["score"]
    return sset["reference"], list(page.get("subjects", sset["comparisons"])), score  # converted: pairs' order


DEFAULT_RISK_LABEL = gettext_noop(
    "risk score"
)  # what the AI's score is called on the page ("a {risk_label} of 40 out of 100")


class FairScore(BlockTask):
    kinds = ("fair_score",)
    name = "fair_score"
    format1_part = "output"
    measures = {
        "k_accept": Column("0/1", "1 if the participant accepted the AI's score for the reference."),
        "k_score": Column("number", "The risk score the participant fixed for the reference.", "0..1", bounds=(0, 1)),
        "fair_score": Column(
            "number", "The participant's fair risk score for a comparison subject.", "0..1", bounds=(0, 1)
        ),
        "rationale": Column("string", "The rationale for that fair score (text)."),
    }
    options = {
        **SETS.option,
        **MODEL,
        "risk_label": SHOWN,
        "page_key": PAGE_KEY,
    }
    needs = ("sets", "model")
    item_shape = SETS
    yields = {Yield.PARITY: "fair_score"}  # the differential-parity job's fair scores vs the AI
    parity_table = "fair_scores_vs_ai"
    no_builder_template = (
        "fair_score blocks belong to the effort design: each set is a reference and its comparisons over "
        "subjects with a risk-score series, whose pairs a pair_distance block rates; a CSV of one row per subject "
        "holds neither, so the design is written as a study file (studies/bundled/effort_demo.json, or its "
        "format 2 conversion: convert_study)"
    )
    no_analysis = (
        "no estimator for fair_score blocks of format 2 yet: their fair scores are in the answers export, and "
        "where a pair_distance block rates pairs of the same pool, in the pairs table's output-space distance D "
        "of the effort analysis of the pair_distance blocks"
    )

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_model(block, pool, base, add, "score", memo)
        ids = once(memo, (pool["key"], "ids"), lambda: {s["id"] for s in pool["subjects"]})
        for dup in duplicates([s["key"] for s in block["sets"]]):
            add(f"{base}.sets", f"set key {dup!r} is used twice")
        for si, sset in enumerate(block["sets"]):
            for member in [sset["reference"], *sset["comparisons"]]:
                if member not in ids:
                    add(f"{base}.sets[{si}]", f"subject {member!r} is not in pool {pool['key']!r}")
            if sset["reference"] in sset["comparisons"]:
                add(f"{base}.sets[{si}].comparisons", "a comparison subject cannot be the reference subject")

    def answer_bounds(self, page: dict, index) -> tuple[int, int]:
        """Exactly one answer per field: K's acceptance and score (the AI's when accepted), and a
        fair score and a rationale per comparison subject."""
        n = len(self.form(page, index).fields)
        return n, n

    def form(self, page: dict, index, data=None) -> forms.Form:
        reference, subjects, _ = _set_view(page, index)
        block, item = index.block(page), page["item"]
        return FairScoreForm(
            data,
            reference=reference,
            subjects=subjects,
            labels=_labels(page, index, reference, subjects),
            set_key=questions.answer_set(block, item),
            key=lambda name, subject: questions.answer_question(block, item, name, subject),
        )

    def answers(self, page: dict, index, form) -> list[AnswerInput]:
        return form.answers(ai_score=_set_view(page, index)[2])

    def context(self, page: dict, index) -> dict:
        reference, subjects, score = _set_view(page, index)
        block = index.block(page)
        pool, labels = block["pool"], _labels(page, index, reference, subjects)
        return {
            "reference": labels[reference],
            "ai_score": round(score * 100, 1),
            "risk_label": block.get("risk_label", gettext(DEFAULT_RISK_LABEL)),
            "reference_card": index.card(pool, reference, labels[reference]),
            "comparisons": [{"subject": x, "card": index.card(pool, x, labels[x])} for x in subjects],
            # every person's series in one chart above the cards (one chart per card made the page 4,400 px tall)
            "chart": index.subjects_chart(pool, [reference, *subjects], list(labels.values())),
        }

    def simulate(self, page, index, rater, rng) -> dict[str, str]:
        """K's score: accepted with probability expit(leniency) (1/2 for a neutral rater), else the AI's
        shifted by N(0, 8) points; each comparison subject gets K's score plus N(0, 10 * noise) points."""
        from simulation.raters import accepts

        _, subjects, score = _set_view(page, index)
        accept = rng.random() < accepts(rater.leniency)
        k = 100 * score if accept else float(np.clip(100 * score + rng.normal(0, 8), 0, 100))
        data = {"k_decision": "accept" if accept else "correct"}
        if not accept:
            data["k_score"] = f"{k:.1f}"
        for x in subjects:
            data[f"score_{x}"] = f"{float(np.clip(k + rng.normal(0, 10 * rater.noise), 0, 100)):.1f}"
            data[f"rationale_{x}"] = "Similar record to the reference."
        return data
