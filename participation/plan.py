"""The ordered pages one participant sees, drawn from the study file and the participant's seed
(``participation.assignment``: blocks in file order, each block's items in its order). The plan is stored
on the participant, so a later change of this code never changes what a participant already saw.
"""

from tasks.page_index import Page

# Page fields that record where a page fell in this participant's order; they do not change what
# the page shows (its key, kind, set, subjects, prompts and check do).
ORDER_FIELDS = ("set_position", "pair_position")


def plan_for(
    spec: dict, condition_key: str, seed: int, item_choice: dict[str, list[str]] | None = None, content=None
) -> list[Page]:
    """The participant's pages of a stored (format 2) study file (``participation.assignment``, with the
    sampled blocks' ``item_choice``, every item of the others; ``content``: the file's
    ``studies.content.StudyContent`` when the caller has it)."""
    from participation.assignment import build_plan_v2
    from studies.content import study_content
    from studies.services import spec_digest

    content = content or study_content(spec, spec_digest(spec))
    return build_plan_v2(spec, content, condition_key, seed, item_choice or {})
