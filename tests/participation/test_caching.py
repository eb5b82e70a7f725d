"""The per-worker caches' bounds: entries, and bytes where a weight is given."""

import pytest

from core.caching import BoundedCache


def test_entries_bound_evicts_the_least_recently_used():
    cache = BoundedCache(size=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3


def test_bytes_bound_evicts_until_the_total_fits_and_never_keeps_an_oversized_value():
    cache = BoundedCache(size=10, max_bytes=100, weigh=len)
    cache.put("a", "x" * 40)
    cache.put("b", "x" * 40)
    assert cache.weight == 80
    cache.put("c", "x" * 30)  # 110 > 100: a goes
    assert cache.get("a") is None and cache.weight == 70
    big = "x" * 101
    assert cache.put("d", big) is big and cache.get("d") is None and cache.weight == 70
    cache.put("b", "x" * 10)  # replacing an entry replaces its weight
    assert cache.weight == 40
    with pytest.raises(ValueError, match="go together"):
        BoundedCache(size=1, max_bytes=10)


@pytest.mark.django_db
def test_exports_are_kept_within_the_byte_budget(demo_study, settings):
    from participation.simulate import simulate_participants
    from research import export

    simulate_participants("effort-demo", n=4, seed=1)
    first = export.cached_export("effort-demo")
    assert export.cached_export("effort-demo") is first  # kept: paging does not rebuild
    assert export._EXPORTS.weight == export.export_bytes(first) > 0
    export._EXPORTS.max_bytes = export.export_bytes(first) - 1  # now too large to keep
    try:
        export._EXPORTS.clear()
        again = export.cached_export("effort-demo")
        assert export.cached_export("effort-demo") is not again and export._EXPORTS.weight == 0
    finally:
        export._EXPORTS.max_bytes = settings.EXPORT_CACHE_MAX_BYTES


def test_study_and_participant_caches_are_bounded_in_bytes():
    """Every per-worker cache of the participant path has a byte budget, weighed from the JSON it holds."""
    from core.caching import json_bytes
    from participation import enrolment
    from studies import content, study_facts

    for cache in (content._CACHE, study_facts._FACTS_CACHE, enrolment._CACHE):
        assert cache.max_bytes is not None and cache.max_bytes <= 128 * 1024 * 1024
    assert json_bytes({"a": [1, 2]}) == 5 * len('{"a":[1,2]}')
