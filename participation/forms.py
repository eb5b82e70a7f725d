"""The participant's forms, one per page kind. Each checks answers on the server (range, required,
type) with a specific message and turns valid input into :class:`participation.services.AnswerInput`.

Risk scores are entered as percentages (0-100, as the pages show them) and stored as fractions
in [0, 1], the scale of the model's risk score and of the output-space distance D.
"""

from decimal import Decimal

from django import forms

from participation.services import AnswerInput

FACTOR_CHOICES = [
    ("trajectory", "Trajectory / trend over the years"),
    ("aggregate", "Aggregate / total over the years"),
    ("other", "Other (please specify below)"),
]
SCORE_ERRORS = {
    "required": "Enter a risk score between 0 and 100.",
    "invalid": "Enter a number between 0 and 100, such as 35 or 62.5.",
    "min_value": "A risk score cannot be below 0. Enter a number between 0 and 100.",
    "max_value": "A risk score cannot be above 100. Enter a number between 0 and 100.",
    "max_decimal_places": "Use at most two decimal places.",
    "max_digits": "Enter a number between 0 and 100.",
    "max_whole_digits": "Enter a number between 0 and 100.",
}


def score_field(label: str, required: bool = True) -> forms.DecimalField:
    return forms.DecimalField(
        label=label,
        required=required,
        min_value=Decimal(0),
        max_value=Decimal(100),
        max_digits=5,
        decimal_places=2,
        error_messages=SCORE_ERRORS,
        widget=forms.NumberInput(attrs={"step": "any", "min": 0, "max": 100, "inputmode": "decimal"}),
    )


class InstructionsForm(forms.Form):
    def answers(self) -> list[AnswerInput]:
        return []


class LikertPageForm(forms.Form):
    """A distance rating on the study's Likert scale, with the BTS prediction where the study asks
    for one and, on the overall question, the optional rationale factors."""

    def __init__(self, *args, page: dict, spec: dict, question: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.page = page
        likert = spec["likert"]
        points = likert["points"]
        self.fields["rating"] = forms.TypedChoiceField(
            label=question,
            choices=[(i + 1, label) for i, label in enumerate(likert["labels"])],
            coerce=int,
            widget=forms.RadioSelect,
            error_messages={
                "required": f"Choose one of the {points} options.",
                "invalid_choice": f"Choose one of the {points} options on the scale.",
            },
        )
        if page["measure"] in spec["bts"]["questions"]:
            self.fields["prediction"] = forms.IntegerField(
                label=spec["bts"]["prompt"],
                min_value=0,
                max_value=100,
                error_messages={
                    "required": "Enter a percentage between 0 and 100.",
                    "invalid": "Enter a whole number between 0 and 100.",
                    "min_value": "A percentage cannot be below 0.",
                    "max_value": "A percentage cannot be above 100.",
                },
                widget=forms.NumberInput(attrs={"min": 0, "max": 100, "inputmode": "numeric"}),
            )
        if page["measure"] == "overall" and spec["rationale_factors"]:
            self.fields["factors"] = forms.MultipleChoiceField(
                label="Optional: which factor(s) influenced your answer? Select all that apply.",
                choices=FACTOR_CHOICES,
                required=False,
                widget=forms.CheckboxSelectMultiple,
            )
            self.fields["factor_text"] = forms.CharField(
                label="If other, please specify",
                required=False,
                max_length=2000,
                widget=forms.Textarea(attrs={"rows": 2}),
            )

    def clean(self):
        data = super().clean()
        if "other" in data.get("factors", []) and not data.get("factor_text", "").strip():
            self.add_error("factor_text", "You chose 'Other': please say which factor.")
        return data

    def answers(self) -> list[AnswerInput]:
        page, data = self.page, self.cleaned_data
        base = f"pair/{page['set']}/{page['subject']}"
        common = {"set_key": page["set"], "subject_key": page["subject"]}
        out = [
            AnswerInput(question=f"{base}/{page['measure']}", measure=page["measure"], number=data["rating"], **common)
        ]
        if "prediction" in self.fields:
            out.append(
                AnswerInput(
                    question=f"{base}/{page['measure']}/prediction",
                    measure="prediction",
                    number=data["prediction"],
                    **common,
                )
            )
        if data.get("factors"):
            out.append(
                AnswerInput(question=f"{base}/factors", measure="factors", text=",".join(data["factors"]), **common)
            )
        if data.get("factor_text", "").strip():
            out.append(
                AnswerInput(
                    question=f"{base}/factor_text", measure="factor_text", text=data["factor_text"].strip(), **common
                )
            )
        return out


class OutputPageForm(forms.Form):
    """K's AI risk score, accepted or corrected, then a fair score and a rationale per comparison."""

    def __init__(self, *args, page: dict, reference: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.page, self.reference = page, reference
        self.fields["k_decision"] = forms.ChoiceField(
            label=f"Do you accept the AI's risk score for {reference}?",
            choices=[("accept", "Accept the AI's score"), ("correct", "Correct it with my own score")],
            widget=forms.RadioSelect,
            error_messages={"required": f"Say whether you accept the AI's score for {reference}."},
        )
        self.fields["k_score"] = score_field(f"Your risk score for {reference} (0-100)", required=False)
        for subject in page["subjects"]:
            self.fields[f"score_{subject}"] = score_field(f"Fair risk score for {subject} (0-100)")
            self.fields[f"rationale_{subject}"] = forms.CharField(
                label=f"Why is this score fair for {subject}?",
                min_length=5,
                max_length=4000,
                widget=forms.Textarea(attrs={"rows": 3}),
                error_messages={
                    "required": f"Write a short rationale for {subject}'s score.",
                    "min_length": "Write at least a few words (5 characters or more).",
                },
            )

    def clean(self):
        data = super().clean()
        if data.get("k_decision") == "correct" and data.get("k_score") is None and "k_score" not in self.errors:
            self.add_error(
                "k_score", f"You chose to correct the score: enter your risk score for {self.reference} (0-100)."
            )
        if data.get("k_decision") == "accept" and data.get("k_score") is not None:
            # the typed score would otherwise be dropped silently (an accepted score is the AI's)
            self.add_error(
                "k_score",
                f"You chose to accept the AI's score for {self.reference} but also typed your own score "
                f"({data['k_score']:g}): choose \"Correct it with my own score\" to use yours, or clear the box "
                "to accept the AI's.",
            )
        return data

    def answers(self, ai_score: float) -> list[AnswerInput]:
        data, set_key = self.cleaned_data, self.page["set"]
        accepted = data["k_decision"] == "accept"
        k_score = ai_score if accepted else float(data["k_score"]) / 100
        out = [
            AnswerInput(
                question=f"output/{set_key}/k_accept",
                measure="k_accept",
                set_key=set_key,
                subject_key=self.reference,
                number=1 if accepted else 0,
            ),
            AnswerInput(
                question=f"output/{set_key}/k_score",
                measure="k_score",
                set_key=set_key,
                subject_key=self.reference,
                number=k_score,
            ),
        ]
        for subject in self.page["subjects"]:
            common = {"set_key": set_key, "subject_key": subject}
            out.append(
                AnswerInput(
                    question=f"output/{set_key}/{subject}/score",
                    measure="fair_score",
                    number=float(data[f"score_{subject}"]) / 100,
                    **common,
                )
            )
            out.append(
                AnswerInput(
                    question=f"output/{set_key}/{subject}/rationale",
                    measure="rationale",
                    text=data[f"rationale_{subject}"].strip(),
                    **common,
                )
            )
        return out


class DisagreementPageForm(forms.Form):
    def __init__(self, *args, page: dict, prompts: dict[str, dict], **kwargs):
        super().__init__(*args, **kwargs)
        self.page, self.prompts = page, prompts
        for key in page["prompts"]:
            level = "high" if prompts[key]["label"] == 1 else "low"
            self.fields[f"agree_{key}"] = forms.TypedChoiceField(
                label=f"The AI rates this person ({prompts[key]['subject']}) {level} risk. Do you agree?",
                choices=[(1, "Yes, I agree"), (0, "No, I disagree")],
                coerce=int,
                widget=forms.RadioSelect,
                error_messages={"required": "Answer yes or no."},
            )

    def answers(self) -> list[AnswerInput]:
        return [
            AnswerInput(
                question=f"disagreement/{key}",
                measure="agree",
                subject_key=self.prompts[key]["subject"],
                number=self.cleaned_data[f"agree_{key}"],
                text=key,
            )
            for key in self.page["prompts"]
        ]


class ScreeningPageForm(forms.Form):
    """The study file's screening question; an answer outside ``eligible`` screens the participant out."""

    def __init__(self, *args, screening: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.screening = screening
        self.fields["choice"] = forms.ChoiceField(
            label=screening["question"],
            choices=[(o, o) for o in screening["options"]],
            widget=forms.RadioSelect,
            error_messages={"required": "Choose one option."},
        )

    @property
    def eligible(self) -> bool:
        return self.cleaned_data["choice"] in self.screening["eligible"]

    def answers(self) -> list[AnswerInput]:
        choice = self.cleaned_data["choice"]
        return [AnswerInput(question="screening", measure="screening", number=int(self.eligible), text=choice)]


class AttentionPageForm(forms.Form):
    def __init__(self, *args, check: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.check = check
        self.fields["choice"] = forms.ChoiceField(
            label=check["question"],
            choices=[(o, o) for o in check["options"]],
            widget=forms.RadioSelect,
            error_messages={"required": "Choose one option."},
        )

    def answers(self) -> list[AnswerInput]:
        choice = self.cleaned_data["choice"]
        return [
            AnswerInput(
                question=f"attention/{self.check['key']}",
                measure="attention",
                number=1 if choice == self.check["correct"] else 0,
                text=choice,
            )
        ]
