"""The HTML reports with their JSON and CSV files, one module per report: ``base`` (what they share),
``effort`` (the effort study's analysis), ``audit`` (the model audit), ``parity`` (differential parity),
``situation_testing`` (ST / CST / CF and the law-school experiment), ``design`` (a format 2 study's
analysis by rater group)."""
