"""Form fields shared by the task types, each with specific error messages."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

SCORE_ERRORS = {
    "required": _("Enter a risk score between 0 and 100."),
    "invalid": _("Enter a number between 0 and 100, such as 35 or 62.5."),
    "min_value": _("A risk score cannot be below 0. Enter a number between 0 and 100."),
    "max_value": _("A risk score cannot be above 100. Enter a number between 0 and 100."),
    "max_decimal_places": _("Use at most two decimal places."),
    "max_digits": _("Enter a number between 0 and 100."),
    "max_whole_digits": _("Enter a number between 0 and 100."),
}
CONFIDENCE_LABELS = (_("Not at all"), _("Slightly"), _("Moderately"), _("Very"), _("Completely"))
YES_NO = ((1, _("Yes")), (0, _("No")))


def follow_ups(block: Mapping[str, Any], ai: str | None) -> tuple[bool, bool]:
    """Whether a page choosing between subjects asks how sure the participant is (the block's ``strength``) and
    the BTS prediction (a block with ``bts`` whose subjects the AI's scores order: ``ai``, the favoured one)."""
    return bool(block["strength"]), "bts" in block and ai is not None


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
            "required": _("Enter a percentage between 0 and 100."),
            "invalid": _("Enter a whole number between 0 and 100."),
            "min_value": _("A percentage cannot be below 0."),
            "max_value": _("A percentage cannot be above 100."),
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
            "required": ngettext("Choose one of the %(n)d options.", "Choose one of the %(n)d options.", points)
            % {"n": points},
            "invalid_choice": ngettext(
                "Choose one of the %(n)d options on the scale.", "Choose one of the %(n)d options on the scale.", points
            )
            % {"n": points},
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


def option_choices(given: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(value, text) of the ``options`` of a question, attention check or screening: the value is the
    option as the study file's first language words it, the text as the participant's language does
    (``option_labels`` of a translated file, ``studies.translation.localized``)."""
    return list(zip(given["options"], given.get("option_labels", given["options"]), strict=True))


def option_field(label: str, given: Mapping[str, Any]) -> forms.ChoiceField:
    """One of the ``options`` of ``given`` (stored as its first-language text)."""
    return forms.ChoiceField(
        label=label,
        choices=option_choices(given),
        widget=forms.RadioSelect,
        error_messages={"required": _("Choose one option.")},
    )
