"""Group sizes worth comparing (``analysis.group_size``)."""

from analysis.group_size import min_group_size, small_group_warnings


def test_min_group_size_matches_cohens_table():
    """Cohen (1988), Statistical Power Analysis for the Behavioral Sciences, Table 2.4.1 (two-sided
    alpha .05, power .80): n = 64 per group for d = 0.5 and 26 for d = 0.8."""
    assert min_group_size() == 64
    assert min_group_size(0.8) == 26


def test_small_group_warnings_name_only_the_small_groups():
    warnings = small_group_warnings({"judge": 64, "lay": 63, "other": 10.5})
    assert len(warnings) == 2
    assert warnings[0].startswith("lay: 63 participants, fewer than the 64 per group")
    assert warnings[1].startswith("other: 10.5 participants")
    assert small_group_warnings({"a": 5}, minimum=5) == []
