"""The models have moved to the apps that own their lifecycle: ``studies.models`` (Study, Condition),
``participation.models`` (Participant, PageVisit, Answer) and ``runs.models`` (AnalysisRun, Calibration,
AuditRun), keeping their tables. This app keeps its migrations, which created those tables."""
