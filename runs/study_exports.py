"""The export tables a job reads, each built once per job (``research.export.export_tables`` queries every
answer, visit and quality rule of a study: the audit read the same study's export up to 3 + 3N times for N source
studies, the analysis 4 times) and passed down to the sources, the feedback and the sensitivity."""

from dataclasses import dataclass, field

from django.db.models import Q

from research.export import ExportTables, export_tables
from research.quality import SERVER


def server_flagged(tables: ExportTables) -> bool:
    """Whether a participant of the export has a flag of a server-measured rule: without one, every quality
    exclusion mode excludes the same participants (``research.quality.excluded_by_quality``), and the
    export is the same under each."""
    quality = tables.quality
    flagged = quality["flagged"].fillna(0).astype(int) == 1
    return bool((flagged & (quality["source"] == SERVER)).any())


@dataclass
class StudyExports:
    """One job's snapshot of each study's export: :meth:`tables` builds a study's tables once per sample
    (``completed``: completed non-pilot participants, the audit's sources; else every non-pilot participant, or
    every participant with ``include_pilot``) and quality exclusion mode, once in all when no participant has a
    server-measured flag (every mode the same), and the completed sample not again when every non-pilot
    participant has completed (the audited study is often a source too)."""

    _tables: dict[tuple[str, bool, bool], dict[str, ExportTables]] = field(default_factory=dict)

    def tables(
        self, slug: str, *, completed: bool = False, quality_exclusion: str = "study", include_pilot: bool = False
    ) -> ExportTables:
        """The export of ``slug`` (``research.export.export_tables`` with ``quality_exclusion`` and, unless
        ``completed``, ``include_pilot``)."""
        include_pilot = include_pilot and not completed
        modes = self._tables.setdefault((slug, completed, include_pilot), {})
        if quality_exclusion in modes:
            return modes[quality_exclusion]
        if modes:
            first = next(iter(modes.values()))
            if not server_flagged(first):
                return modes.setdefault(quality_exclusion, first)
        everyone = self._tables.get((slug, False, False), {}).get(quality_exclusion)
        if completed and everyone is not None and (everyone.participants["status"] == "completed").all():
            return modes.setdefault(quality_exclusion, everyone)  # the same participants
        participants = Q(status="completed", pilot=False) if completed else None
        modes[quality_exclusion] = export_tables(
            slug, include_pilot=include_pilot, participants=participants, quality_exclusion=quality_exclusion
        )
        return modes[quality_exclusion]

    def same_in_every_mode(self, slug: str, *, completed: bool = False, include_pilot: bool = False) -> bool:
        """Whether every quality exclusion mode gives the same export of ``slug``'s sample (:meth:`tables`'s
        arguments): no participant in it has a server-measured flag, so an analysis of the sample under another
        mode is the one under the study's own exclusions."""
        return not server_flagged(self.tables(slug, completed=completed, include_pilot=include_pilot))
