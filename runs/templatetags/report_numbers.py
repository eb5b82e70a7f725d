"""Template filters for numbers in reports (``{% load report_numbers %}``): ``pvalue``, ``estimate``,
``ci`` (a (low, high) pair, optionally at an estimate's precision: ``{{ pair|ci:alpha }}``), ``stars``.
The formatting itself is in ``runs.report_format``."""

from django import template

from runs import report_format

register = template.Library()


@register.filter
def pvalue(value) -> str:
    return report_format.format_pvalue(value)


@register.filter
def estimate(value) -> str:
    return report_format.format_estimate(value)


@register.filter
def ci(pair, estimate=None) -> str:
    low, high = pair
    return report_format.format_ci(low, high, estimate)


@register.filter
def stars(value) -> str:
    return report_format.stars(value)
