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

A format 2 block converted from format 1 (``studies.format1``) has the option ``page_key`` and keeps
format 1's keys and stores the rows format 1 stored: page keys come from :func:`page_key`, question
keys from :func:`answer_question`, an answer's ``set_key`` from :func:`answer_set`; the export reads
the answers table's block and subject through :func:`answers_block` and :func:`answers_subject`, the
pairs table's set through :func:`block_set`.
"""

from collections.abc import Iterable, Mapping
from typing import Any

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


def page_key(block: Mapping[str, Any], item: str = "", measure: str = "") -> str:
    """The key of a page of ``block``: ``<block>`` (a page block, an attention block, a one-page task
    block), ``<block>/<item>``, or ``<block>/<item>/<measure>`` (a pair distance's measure pages). A block
    with ``page_key`` (converted from format 1) keeps format 1's: ``pair/<set>/<b>/<measure>`` (``<b>`` the
    pair ``a~b``'s comparison), ``output/<set>`` (``<set>`` the item), ``disagreement``, ``attention/<check>``."""
    keys = block.get("page_key")
    if keys is None:
        return "/".join(part for part in (block["key"], item, measure) if part)
    part = keys["block"]
    if part == "pairs":
        return pair_question(keys["key"], item.split("~")[1], measure)
    if part == "output":
        return f"output/{item}"
    if part == "attention":
        return attention_question(keys["key"])
    return "disagreement"


def answers_block(block: Mapping[str, Any]) -> str:
    """The answers table's ``block`` of the block's answers: its key, or the format 1 part it was."""
    return block.get("page_key", {}).get("block", block["key"])


def answers_rows(block: Mapping[str, Any], items: Iterable[str]) -> dict:
    """Where the answers table holds the answers of ``block`` (its ``items``): ``block``, its
    :func:`answers_block`; a converted block's name (``pairs``, ...) is shared by the blocks its format 1
    part became, so its rows are also those of its ``conditions`` about its items (:func:`answers_subject`;
    an ``output`` set's rows are about its reference and comparisons): a question (condition, subject) is
    format 1's (condition, set, comparison)."""
    if "page_key" not in block:
        return {"block": block["key"]}
    if block["page_key"]["block"] == "output":
        subjects = [s for one in block["sets"] for s in (one["reference"], *one["comparisons"])]
    else:
        subjects = [answers_subject(block, item, "") for item in items]
    return {"block": answers_block(block), "conditions": tuple(block["conditions"]), "subjects": tuple(subjects)}


def block_set(block: Mapping[str, Any]) -> str:
    """The pairs table's ``set`` of a pair-distance block: its key, or the format 1 set it was."""
    return block.get("page_key", {}).get("key", block["key"])


def answer_question(block: Mapping[str, Any], item: str, measure: str, subject: str = "") -> str:
    """The question key of a task answer (:func:`task_question`); a converted block's is format 1's:
    ``pair/<set>/<b>/<measure>``, ``output/<set>/k_accept`` / ``.../<subject>/score`` (a fair score),
    ``disagreement/<prompt>`` (the item's key, ``item_keys``)."""
    part = block.get("page_key", {}).get("block")
    if part == "pairs":
        return page_key(block, item, measure)
    if part == "output":
        return output_question(item, "score" if measure == "fair_score" else measure, subject)
    if part == "disagreement":
        return disagreement_question(block["item_keys"].get(item, item))
    return task_question(block["key"], item, measure, subject)


def answer_set(block: Mapping[str, Any], item: str = "") -> str:
    """An answer's ``set_key``: the block's key; a converted block's as format 1 stored it (the set of a
    pair or output page, blank on disagreement and attention pages)."""
    part = block.get("page_key", {}).get("block")
    if part is None:
        return block["key"]
    return {"pairs": block["page_key"].get("key", ""), "output": item}.get(part, "")


def answers_subject(block: Mapping[str, Any], item: str, subject: str) -> str:
    """The answers table's ``subject`` of an answer: its own ``subject``, else the page's item; a
    converted block's as format 1 exported it (the pair ``a~b`` of a pair page, the check of an
    attention page)."""
    part = block.get("page_key", {}).get("block")
    if part == "pairs":
        return item
    if part == "attention":
        return block["page_key"]["key"]
    return subject or item
