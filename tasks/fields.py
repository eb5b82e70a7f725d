"""Form fields shared by the task types, each with specific error messages."""

from decimal import Decimal

from django import forms

SCORE_ERRORS = {
    "required": "Enter a risk score between 0 and 100.",
    "invalid": "Enter a number between 0 and 100, such as 35 or 62.5.",
    "min_value": "A risk score cannot be below 0. Enter a number between 0 and 100.",
    "max_value": "A risk score cannot be above 100. Enter a number between 0 and 100.",
    "max_decimal_places": "Use at most two decimal places.",
    "max_digits": "Enter a number between 0 and 100.",
    "max_whole_digits": "Enter a number between 0 and 100.",
}
CONFIDENCE_LABELS = ("Not at all", "Slightly", "Moderately", "Very", "Completely")
YES_NO = ((1, "Yes"), (0, "No"))


def score_field(label: str, required: bool = True) -> forms.DecimalField:
    """A risk score in percent (0-100, two decimals)."""
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


def prediction_field(label: str) -> forms.IntegerField:
    """The Bayesian Truth Serum prediction: a whole percentage 0-100."""
    return forms.IntegerField(
        label=label,
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


def scale_field(label: str, labels, *, required: bool = True) -> forms.TypedChoiceField:
    """A point scale as radio buttons; the answer is the 1-based index of the chosen label."""
    points = len(labels)
    return forms.TypedChoiceField(
        label=label,
        choices=[(i + 1, text) for i, text in enumerate(labels)],
        coerce=int,
        required=required,
        widget=forms.RadioSelect,
        error_messages={
            "required": f"Choose one of the {points} options.",
            "invalid_choice": f"Choose one of the {points} options on the scale.",
        },
    )


def binary_field(label: str, choices, required_message: str) -> forms.TypedChoiceField:
    """A yes/no question stored as 1/0."""
    return forms.TypedChoiceField(
        label=label,
        choices=list(choices),
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={"required": required_message, "invalid_choice": required_message},
    )


def option_field(label: str, options) -> forms.ChoiceField:
    """One of the given options (stored as its text)."""
    return forms.ChoiceField(
        label=label,
        choices=[(o, o) for o in options],
        widget=forms.RadioSelect,
        error_messages={"required": "Choose one option."},
    )
