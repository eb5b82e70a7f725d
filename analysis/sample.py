"""Which participants an analysis uses, and how many were dropped for which reason.

By default only completed participants who passed the attention checks are analysed (the
effort-aware fairness paper analyses completed participants after excluding those who failed 2 of
3 attention checks). ``include_incomplete=True`` also keeps participants who have not completed
(their answered pairs count), still without the attention-excluded ones.
"""

from dataclasses import dataclass

import pandas as pd

EXCLUDED_REASON = "excluded (failed the attention checks)"


@dataclass(frozen=True)
class SampleSelection:
    """``pairs`` of the analysed participants; ``dropped`` counts participants by reason (one
    reason each: not completed by status first, then the attention exclusion)."""

    pairs: pd.DataFrame
    included: int
    dropped: dict[str, int]
    include_incomplete: bool

    def as_dict(self) -> dict:
        return {
            "included": self.included,
            "dropped": dict(self.dropped),
            "dropped_total": sum(self.dropped.values()),
            "include_incomplete": self.include_incomplete,
        }

    def sentence(self) -> str:
        """'Analysed 140 participants; dropped 12: not completed (active) 9, excluded (...) 3.'"""
        which = "all participants with answers" if self.include_incomplete else "completed participants only"
        if not self.dropped:
            return f"Analysed {self.included} participants ({which}); none dropped."
        reasons = ", ".join(f"{reason} {count}" for reason, count in self.dropped.items())
        return f"Analysed {self.included} participants ({which}); dropped {sum(self.dropped.values())}: {reasons}."


def select_participants(
    pairs: pd.DataFrame, participants: pd.DataFrame | None = None, *, include_incomplete: bool = False
) -> SampleSelection:
    """Keep the pairs of completed, non-excluded participants (``participants``: the export's
    participants table with ``participant_id``, ``status``, ``excluded``). Without ``participants``
    only the ``excluded`` column of ``pairs`` is used. Participants in the table without any rated
    pair (e.g. declined or withdrawn) are counted under their status as well."""
    everyone = pd.Series(pd.unique(pairs["participant_id"]))
    excluded = set(pairs.loc[pairs["excluded"] == 1, "participant_id"])
    reasons: dict[str, str] = {}
    if participants is not None:
        known = participants.drop_duplicates("participant_id").set_index("participant_id")
        missing = sorted(set(everyone) - set(known.index))
        if missing:
            raise ValueError(f"{len(missing)} participants of the pairs table are not in the participants table")
        everyone = pd.Series(known.index)
        excluded |= set(known.index[known["excluded"] == 1])
        if not include_incomplete:
            for pid, status in known["status"].items():
                if status != "completed":
                    reasons[pid] = f"not completed ({status})"
    for pid in excluded:
        reasons.setdefault(pid, EXCLUDED_REASON)
    kept = pairs[~pairs["participant_id"].isin(reasons)]
    counts = pd.Series(list(reasons.values()), dtype=object).value_counts()
    dropped = {str(reason): int(counts[reason]) for reason in sorted(counts.index)}
    return SampleSelection(kept, int(kept["participant_id"].nunique()), dropped, include_incomplete)
