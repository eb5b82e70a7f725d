"""What task pages call the subjects they show: "<Noun> A", "<Noun> B", ... in page order, never a
subject's id (an id such as ``K3`` or ``d017`` is the study file's, not the participant's)."""

from string import ascii_uppercase

from django.utils.text import capfirst
from django.utils.translation import gettext

from tasks.page_index import Page, PageIndex


def subject_labels(noun: str, count: int) -> list[str]:
    """``count`` labels for the subjects of a page, the pool's noun with its first letter raised
    ("Angeklagte Person A"); past Z by number ("Person 27")."""
    noun = capfirst(noun)
    return [
        gettext("%(noun)s %(letter)s") % {"noun": noun, "letter": ascii_uppercase[i] if i < 26 else str(i + 1)}
        for i in range(count)
    ]


def page_labels(index: PageIndex, page: Page, count: int) -> list[str]:
    """:func:`subject_labels` in the noun of the page's pool."""
    return subject_labels(index.noun(index.pool_of(page)), count)
