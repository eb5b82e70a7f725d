"""Neutral helpers every app may use and that import no app: bounded per-process caches
(``core.caching``), safe reading of uploaded CSV files (``core.uploads``) and time limits
(``core.time_limit``), command-line argument types (``core.cli_args``), a progress bar
(``core.progress``) and JSON that refuses NaN and Infinity (``core.strict_json``)."""
