"""Question keys of stored answers (``Answer.question``), built only here: the task forms use these
functions to store answers and the export uses them to find answers again.

Format 1 keys (unchanged): ``pair/<set>/<subject>/<measure>`` (and ``.../factors``,
``.../factor_text``), ``<...>/prediction`` for a Bayesian Truth Serum prediction of a question,
``output/<set>/k_accept``, ``output/<set>/<subject>/score``, ``disagreement/<prompt>``,
``attention/<check>``, ``screening``.
Format 2 keys (the format 2 contract): ``<block>/<item>/<measure>`` for task answers (a pair
distance's measure page adds its prediction as ``<block>/<item>/<measure>/prediction``; a fair-score
set's per-subject answers are ``<block>/<set>/<subject>/<measure>``), ``<block>/<question>`` for
questionnaire answers and ``attention/<block>`` for attention blocks.
"""

SCREENING = "screening"


def pair_question(set_key: str, subject: str, measure: str) -> str:
    """Format 1 pair answer: ``pair/<set>/<subject>/<measure>`` (measure, factors or factor_text)."""
    return f"pair/{set_key}/{subject}/{measure}"


def prediction_question(question: str) -> str:
    """The BTS prediction that follows ``question`` on a pair distance page: ``<question>/prediction``."""
    return f"{question}/prediction"


def output_question(set_key: str, name: str, subject: str = "") -> str:
    """Format 1 output-space answer: ``output/<set>/<name>`` or ``output/<set>/<subject>/<name>``."""
    return f"output/{set_key}/{subject}/{name}" if subject else f"output/{set_key}/{name}"


def disagreement_question(prompt_key: str) -> str:
    """Format 1 yes/no disagreement prompt: ``disagreement/<prompt>``."""
    return f"disagreement/{prompt_key}"


def attention_question(key: str) -> str:
    """An attention check (format 1 check key or format 2 block key): ``attention/<key>``."""
    return f"attention/{key}"


def task_question(block: str, item: str, measure: str, subject: str = "") -> str:
    """Format 2 task answer: ``<block>/<item>/<measure>``, or ``<block>/<item>/<subject>/<measure>``
    for the answers about one subject of a fair-score set."""
    return f"{block}/{item}/{subject}/{measure}" if subject else f"{block}/{item}/{measure}"


def questionnaire_question(block: str, question: str) -> str:
    """Format 2 questionnaire answer: ``<block>/<question>``."""
    return f"{block}/{question}"
