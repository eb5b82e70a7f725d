"""What the participant pages need of a stored study version, cached per process."""

from dataclasses import dataclass

from core.caching import BoundedCache, json_bytes
from studies.models import Condition, Study


@dataclass(frozen=True)
class StudyFacts:
    """What the participant pages need of one stored study version."""

    slug: str
    spec: dict
    spec_hash: str
    condition_keys: dict[int, str]  # Condition.pk -> key


# At most 1,000 versions and 64 MB of study files per worker.
_FACTS_CACHE: BoundedCache[StudyFacts] = BoundedCache(
    size=1000, max_bytes=64 * 1024 * 1024, weigh=lambda facts: json_bytes(facts.spec)
)


def study_facts(study_id: int, condition_id: int | None = None, spec_hash: str | None = None) -> StudyFacts:
    """Slug, study file and condition keys of a study version.

    Read once per process when the cached entry can be trusted: it knows ``condition_id`` (a
    consented participant's pages, the hot path) or has the version's current ``spec_hash``. A
    version's slug never changes, and its file only by an edit in place before anyone arrived,
    which also gives it a new digest and new conditions. Otherwise (consent and end pages, once per
    participant) they are read from the database.
    """
    facts = _FACTS_CACHE.get(study_id)
    if facts is None or (condition_id not in facts.condition_keys and spec_hash != facts.spec_hash):
        slug, spec, stored_hash = Study.objects.values_list("slug", "spec", "spec_hash").get(pk=study_id)
        keys = dict(Condition.objects.filter(study_id=study_id).values_list("pk", "key"))
        facts = _FACTS_CACHE.put(study_id, StudyFacts(slug, spec, stored_hash, keys))
    return facts
