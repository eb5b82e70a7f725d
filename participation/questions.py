"""Answer question keys, built in this one place (the forms store answers under them, the export
reads them back). Format 1 keys:

- ``pair/<set>/<subject>/<measure>``: a pair page's Likert answer (trajectory, aggregate, overall),
  its rationale factors (``factors``, ``factor_text``) and, with ``/prediction`` appended by
  ``prediction_question``, the BTS follow-up;
- ``output/<set>/k_accept``, ``output/<set>/k_score`` (the reference K, no subject) and
  ``output/<set>/<subject>/score``, ``output/<set>/<subject>/rationale``;
- ``disagreement/<prompt>``, ``attention/<check>``.
"""


def pair_question(set_key: str, subject: str, measure: str) -> str:
    return f"pair/{set_key}/{subject}/{measure}"


def prediction_question(question: str) -> str:
    """The Bayesian Truth Serum follow-up of ``question``."""
    return f"{question}/prediction"


def output_question(set_key: str, subject: str | None, what: str) -> str:
    """An output-space page's answer about a comparison ``subject``, or about the reference K when
    ``subject`` is None."""
    return f"output/{set_key}/{what}" if subject is None else f"output/{set_key}/{subject}/{what}"


def disagreement_question(prompt_key: str) -> str:
    return f"disagreement/{prompt_key}"


def attention_question(check_key: str) -> str:
    return f"attention/{check_key}"
