"""Which participants a dashboard, its figures and its exports count: all of them, the real ones,
or one kind that is not part of the real sample (simulated; pilot once that flag exists).

Each kind is a boolean field of ``Participant``; "real" means none of them is set. Adding a kind
is one entry in ``FLAGS``.
"""

from django.db.models import Q

FLAGS = ("simulated",)
SAMPLES = ("all", "real", *FLAGS)
DEFAULT_SAMPLE = "all"


def sample_filter(sample: str) -> Q:
    """The condition on ``Participant`` for a sample name (ValueError for an unknown one)."""
    if sample == "all":
        return Q()
    if sample == "real":
        return Q(**{flag: False for flag in FLAGS})
    if sample in FLAGS:
        return Q(**{sample: True})
    raise ValueError(f"unknown participants filter {sample!r}; choose one of {', '.join(SAMPLES)}")
