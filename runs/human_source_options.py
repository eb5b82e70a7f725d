"""The audit's options that read what people said in a study (no scientific imports: the web form lists them)."""

# option (the API's and the form's field name) -> the command's option, the task types it reads, a name
OPTIONS = {
    "metric_from": ("--metric-from", ("pair_comparable", "triplet"), "a learned fair metric"),
    "utility_from": ("--utility-from", ("choose",), "a utility model"),
    "features_from": ("--features-from", ("feature_fairness",), "feature-fairness judgements"),
}
