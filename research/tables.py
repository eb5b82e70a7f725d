"""What a study exports, without building it: every table's columns with their meaning
(``COLUMNS``), the answers' measures per task type (``TASK_MEASURES``) and which tables a study has
(``study_tables``). Light (no pandas), so that the dashboard and the API's table lists need not load
the export itself (``research.export``)."""

from core.columns import Column
from studies.models import Study
from studies.study_file import CLIENT_REPORTED_RULES, QUALITY_RULES
from tasks import TASK_TYPES, block_task

RISK = ("low risk", "high risk")  # value labels of the binary risk labels (SPSS / Stata exports)
COLUMNS: dict[str, dict[str, Column]] = {
    "pairs": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file the participant saw."),
        "condition": Column("string", "Between-subjects condition key."),
        "desirable": Column("0/1", "1 if the effort feature is desirable (income), 0 if undesirable (arrests)."),
        "set": Column("string", "Stimulus set key."),
        "set_position": Column("integer", "0-based position of the set in this participant's order."),
        "reference": Column("string", "Reference subject K."),
        "comparison": Column("string", "Comparison subject X."),
        "relation": Column(
            "string", "Designed relation of X to K (similar/different trend x similar/different total)."
        ),
        "pair_position": Column("integer", "0-based position of the pair within its set for this participant."),
        "d_traj": Column("integer", "Trajectory distance d_E (Likert, 1 = most similar)."),
        "d_aggr": Column("integer", "Aggregate distance d_S (Likert)."),
        "d_overall": Column("integer", "Overall input-space distance d (Likert)."),
        "overall_similar": Column(
            "0/1", "1 if d_overall is on the 'similar' side of the scale (<= similar_max), else 0."
        ),
        "prediction_similar": Column(
            "number", "BTS prediction: percent of others expected to answer 'similar' (0-100).", "0..100"
        ),
        "factor_trajectory": Column("0/1", "1 if the participant named trajectory as a factor (optional question)."),
        "factor_aggregate": Column("0/1", "1 if the participant named the aggregate as a factor."),
        "factor_other": Column("0/1", "1 if the participant named another factor."),
        "factor_text": Column("string", "The other factor, in the participant's words."),
        "k_ai_score": Column("number", "The AI model's risk score for K, in [0, 1].", "0..1"),
        "k_accepted": Column("0/1", "1 if the participant accepted the AI's score for K, 0 if they corrected it."),
        "k_score": Column("number", "The risk score the participant fixed for K, in [0, 1].", "0..1"),
        "fair_score": Column("number", "The participant's fair risk score for X, in [0, 1].", "0..1"),
        "output_distance": Column("number", "Output-space distance D = |k_score - fair_score|.", "0..1"),
        "rationale": Column("string", "The participant's rationale for X's fair score."),
        "ref_total": Column("number", "K's total of the effort feature over the years."),
        "comp_total": Column("number", "X's total."),
        "ref_trend": Column("number", "K's average cumulative acceleration A_avg (mean yearly change)."),
        "comp_trend": Column("number", "X's A_avg."),
        "seconds_traj": Column("number", "Seconds on the trajectory page."),
        "seconds_aggr": Column("number", "Seconds on the aggregate page."),
        "seconds_overall": Column("number", "Seconds on the overall page."),
        "excluded": Column("0/1", "1 if the participant failed at least the study's number of attention checks."),
    },
    "participants": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "condition": Column("string", "Assigned condition (blank before consent or after declining)."),
        "status": Column(
            "string",
            "arrived, declined, active, completed, timed_out, screened_out or withdrawn (answers deleted).",
            "arrived, declined, active, completed, timed_out, screened_out, withdrawn",
        ),
        "simulated": Column("0/1", "1 if created by simulate_participants."),
        "pilot": Column("0/1", "1 if brought by the researcher's pilot link (only with include_pilot)."),
        "language": Column(
            "string",
            "Language of the participant's pages (ISO 639-1), chosen at arrival: the link's ?lang=, else the "
            "browser's, else the study's first.",
        ),
        "arrived_at": Column("datetime", "First arrival (UTC, ISO 8601)."),
        "consented_at": Column("datetime", "Consent time (UTC)."),
        "completed_at": Column("datetime", "Completion time (UTC)."),
        "duration_seconds": Column("number", "completed_at - consented_at, in seconds.", ">= 0"),
        "pages_answered": Column("integer", "Pages saved so far."),
        "pages_total": Column("integer", "Pages in this participant's plan."),
        "attention_passed": Column("integer", "Attention checks passed."),
        "attention_failed": Column("integer", "Attention checks failed."),
        "excluded": Column(
            "0/1",
            "1 if attention_failed >= the study's exclusion threshold, or the participant has a quality flag "
            "the study excludes by (quality.exclude_if).",
        ),
        "seed": Column("integer", "Seed of the participant's randomised order."),
        "quality_score": Column(
            "number",
            "Share of the evaluable quality rules that did not flag (1 = none; see the quality table).",
            "0..1",
        ),
        "quality_flags": Column(
            "string",
            "The quality rules that flag the participant, joined by ';' (server-measured and client-reported: "
            "the quality table's source column says which).",
        ),
        "quota_group": Column(
            "string",
            "The quota groups the participant is counted in ('question = group', joined by ';'; a multiple-choice "
            "answer counts in each option chosen; blank for pilots and for participants not active, timed out or "
            "completed).",
        ),
        "quota_screened_out": Column(
            "string",
            "For a participant screened out by a quota, which: 'question = group' (the group was full) or "
            "'question: minimums' (the places left were needed for other groups' minimums); blank otherwise.",
        ),
    },
    "disagreements": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "condition": Column("string", "Condition key."),
        "prompt": Column("string", "Prompt key."),
        "subject": Column("string", "Decision subject shown."),
        "model_label": Column("0/1", "The AI model's binary label (1 = high risk).", labels=RISK),
        "model_score": Column("number", "The AI model's risk score in [0, 1].", "0..1"),
        "agree": Column("0/1", "1 if the participant agreed with the AI's label."),
        "disagreement": Column("0/1", "s = 1 - agree (1 when the participant's label differs from the model's)."),
        "participant_label": Column(
            "0/1", "The label the participant implies: model_label if agree, else 1 - model_label.", labels=RISK
        ),
        "demo_*": Column("string", "The subject's demographics, one column each (e.g. demo_race, demo_sex)."),
        "excluded": Column("0/1", "1 if the participant is excluded by the attention checks."),
    },
    "model_comparisons": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file the participant saw."),
        "condition": Column("string", "Condition key."),
        "block": Column("string", "Key of the tradeoff block."),
        "comparison": Column("string", "Key of the model comparison (the item) shown."),
        "n_subjects": Column("integer", "Subjects whose outcomes the page showed (the comparison's sub-pool)."),
        "model_a": Column("string", "The model shown as Model A (the comparison's a)."),
        "model_b": Column("string", "The model shown as Model B (the comparison's b)."),
        "chosen": Column("string", "The model the participant found fairer."),
        "fairer": Column("0/1", "1 if the participant found model_a fairer, 0 if model_b."),
        "strength": Column(
            "integer", "How sure the participant was (1 = not at all ... 5 = completely); blank if not given.", "1..5"
        ),
        "accuracy": Column(
            "number", "Accuracy of model_a minus that of model_b on the comparison's subjects.", "-1..1"
        ),
        "fpr_gap": Column(
            "number",
            "FPR gap of model_a minus that of model_b: a gap is the largest minus the smallest false positive rate "
            "over the block's groups.",
            "-1..1",
        ),
        "fnr_gap": Column(
            "number",
            "FNR gap (false negative rates' largest minus smallest over the groups) of model_a minus model_b.",
            "-1..1",
        ),
        "selection_rate_gap": Column(
            "number", "Selection-rate gap (largest minus smallest over the groups) of model_a minus model_b.", "-1..1"
        ),
        "seconds": Column("number", "Seconds on the comparison's page.", ">= 0"),
        "excluded": Column("0/1", "1 if the participant is excluded by the attention checks."),
    },
    "pages": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "page": Column("string", "Page key."),
        "first_shown_at": Column("datetime", "When the page was first shown (UTC)."),
        "submitted_at": Column("datetime", "When it was saved (UTC)."),
        "seconds": Column("number", "Time spent: submitted_at - first_shown_at.", ">= 0", source="server"),
        "refusals": Column("integer", "Submissions refused by validation before it was saved.", source="server"),
        "time_on_page_ms": Column(
            "integer", "Milliseconds the page was open in the browser (blank: unknown).", ">= 0", source="client"
        ),
        "focus_losses": Column(
            "integer", "Times the page lost focus to another tab or window (blank: unknown).", source="client"
        ),
        "pastes": Column("integer", "Paste events in the page's text fields (blank: unknown).", source="client"),
        "pasted_chars": Column("integer", "Characters pasted into text fields (blank: unknown).", source="client"),
        "keystrokes": Column("integer", "Keys pressed in text fields (blank: unknown).", source="client"),
        "typing_ms": Column(
            "integer", "Milliseconds from the first to the last key in text fields (blank: unknown).", source="client"
        ),
        "text_chars": Column(
            "integer", "Characters in the text fields when the page was sent (blank: unknown).", source="client"
        ),
        "words_shown": Column(
            "integer",
            "Words of text the served page showed (blank: unknown, pages saved before it was measured).",
            source="server",
        ),
        "inputs_shown": Column(
            "integer", "Questions (named form inputs) the served page asked (blank: unknown).", source="server"
        ),
    },
    "answers": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file the participant saw."),
        "condition": Column("string", "Condition key."),
        "block": Column(
            "string",
            "Block of the study the answer belongs to: the block key (format 2); pairs, output, disagreement, "
            "attention or screening (format 1).",
        ),
        "task": Column(
            "string",
            "What the page asked: a task type (agree, rate, pair_comparable, pair_distance, fair_score), "
            "questionnaire, attention or screening.",
        ),
        "subject": Column(
            "string",
            "What the answer is about: a subject id, a pair 'a~b', a stimulus set, or the question key "
            "(questionnaire); for format 1 attention checks the check key.",
        ),
        "measure": Column("string", "What was measured (see the codebook's measures: agree, rating, ...)."),
        "value": Column(
            "number",
            "The numeric answer (blank for text answers); for agree 1 when the participant agrees with the AI, else 0.",
        ),
        "text": Column("string", "The text answer (choices, free text; multiple choice as a JSON list)."),
        "page_position": Column("integer", "0-based position of the answer's page in this participant's plan."),
        "excluded": Column("0/1", "1 if the participant is excluded by the attention checks."),
    },
    "questionnaire": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "condition": Column("string", "Condition key."),
        "<question>": Column(
            "string",
            "One column per questionnaire question (its key; 'block/key' when two blocks share a key): the "
            "chosen option, the number, the text, or the chosen options joined by '; '. Blank if unanswered.",
        ),
    },
    "quality": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "rule": Column(
            "string",
            "Quality rule (README 'Answer quality'); client-reported: "
            + ", ".join(CLIENT_REPORTED_RULES)
            + "; the others server-measured. A detection check's rule only for studies with such items.",
            ", ".join(QUALITY_RULES),
        ),
        "source": Column(
            "string",
            "Who measured what the rule reads: server (its clock, the pages it served, the answers, the study's "
            "other participants) or client (the page's script; never excludes alone).",
            "server, client",
        ),
        "measured": Column(
            "number",
            "What the rule measured: share of pages (fast, hurried, away), pages (clock, untyped), longest run "
            "of identical answers (straightline), attention checks failed plus repeated items answered apart "
            "(inconsistent), other participants with a near-duplicate free text (duplicate_text), arrivals "
            "from the address range within the window (burst), characters pasted (pasted), detection items "
            "flagged; blank when unknown.",
        ),
        "threshold": Column("number", "The study's threshold for the rule."),
        "flagged": Column("0/1", "1 if the rule flags the participant, 0 if not; blank when unknown."),
    },
    "assignments": {
        "participant_id": Column("uuid", "Pseudonymous participant id (UUID)."),
        "study": Column("string", "Study slug."),
        "study_version": Column("integer", "Version of the study file."),
        "block": Column("string", "Key of the adaptive block (assignment.adaptive)."),
        "slot": Column("integer", "The participant's page of the block (0-based); its page key is block/#slot."),
        "stripe": Column("integer", "The participant's stripe (participant id modulo 8): its decisions' lock."),
        "sequence": Column("integer", "Order of the decision within its stripe (0-based)."),
        "fit_version": Column("integer", "Version of the block's fit the decision used; blank: balanced fallback."),
        "item": Column("string", "The item chosen (a pair a~b; a triplet anchor~b~c)."),
        "score": Column("number", "Its score (A-optimal gain with a fit; minus times assigned without)."),
        "n_candidates": Column("integer", "Candidates scored."),
        "candidates": Column("string", "Every candidate scored, as JSON [[item, score], ...] in scoring order."),
        "decided_at": Column("datetime", "When the participant reached the page and the item was chosen (UTC)."),
        "seconds": Column("number", "Time the decision took, waiting for the block's lock included.", ">= 0"),
    },
}
TABLES = tuple(COLUMNS)
# Tables of every study; the others only of studies whose design has them (``study_tables``).
ALWAYS = ("participants", "answers", "pages", "quality")

# The measures each task type writes to the answers table (``measure`` and what ``value`` / ``text``
# hold), from the task registry (``TaskType.measures``).
TASK_MEASURES: dict[str, dict[str, Column]] = {task.name: task.measures for task in TASK_TYPES if task.measures}


def tables_of(specs: list[dict]) -> tuple[str, ...]:
    """The tables a study with these versions' files exports, in ``TABLES`` order: ``ALWAYS``, plus
    pairs / disagreements / questionnaire when some version has pair-distance, agree or questionnaire
    blocks, and assignments when some version has an adaptive block."""
    has = set(ALWAYS)
    for spec in specs:
        for block in spec["blocks"]:
            if block["type"] == "questionnaire":
                has.add("questionnaire")
            elif block["type"] == "task" and (table := block_task(block).export_table):
                has.add(table)
            if block["type"] == "task" and "adaptive" in block.get("assignment", {}):
                has.add("assignments")
    return tuple(name for name in TABLES if name in has)


def study_tables(slug: str) -> tuple[str, ...]:
    """The tables the study ``slug`` exports (without building them)."""
    return tables_of(list(Study.objects.filter(slug=slug).values_list("spec", flat=True)))
