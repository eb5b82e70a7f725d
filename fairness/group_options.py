"""The defaults of the group options of a format 2 analysis (light: no scientific library, so that the
web process validates an analysis request without loading the analysis)."""

MIN_GROUP_SIZE = 10  # raters: a smaller rater group is "too few to compare" (or pooled into "other")
MIN_SUBJECT_GROUP = 10  # subjects: a smaller subject group is "too few to compare" (or pooled)
BIN_ABOVE = 5  # a numeric subject-group column with more distinct values is binned
DEFAULT_QUANTILES = (0.25, 0.5, 0.75)  # the default cut points of a binned column: the pool's quartiles
