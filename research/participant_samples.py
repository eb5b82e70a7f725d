"""Which participants a dashboard, its figures and its exports count.

Each kind of participant outside the real sample is a boolean field of ``Participant`` (``FLAGS``:
simulated, pilot); "real" means none is set. The default, "study", is what exports and analyses
count unless asked otherwise: everyone but pilots (real and simulated participants). "all" adds the
pilots. Adding a kind is one entry in ``FLAGS``.
"""

from django.db.models import Q

FLAGS = ("simulated", "pilot")
SAMPLES = ("study", "all", "real", *FLAGS)
DEFAULT_SAMPLE = "study"


def sample_filter(sample: str) -> Q:
    """The condition on ``Participant`` for a sample name (ValueError for an unknown one)."""
    if sample == "all":
        return Q()
    if sample == "study":
        return Q(pilot=False)
    if sample == "real":
        return Q(**{flag: False for flag in FLAGS})
    if sample in FLAGS:
        return Q(**{sample: True})
    raise ValueError(f"unknown participants filter {sample!r}; choose one of {', '.join(SAMPLES)}")
