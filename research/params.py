"""Parsing of values typed by researchers on the command line or in API forms."""

import json


def typed_value(text: str):
    """JSON when the text is JSON (1, -1.0, true, "x"), else the text itself (Female, NonWhite);
    text nested too deeply for the JSON parser stays text (it then matches no value)."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text


def run_situation_testing(data, counterfactuals, params: dict):
    """situation_testing() from command-line or API parameters (values typed as text)."""
    from fairness.situation_testing import situation_testing

    return situation_testing(
        data,
        protected=params["protected"],
        protected_value=typed_value(params["protected_value"]),
        target=params["target"],
        negative_outcome=typed_value(params["negative"]),
        k=params["k"],
        alpha=params["alpha"],
        tau=params["tau"],
        counterfactuals=counterfactuals,
        features=params.get("features") or None,
        mode=params["mode"],
        discrimination="positive" if params["positive"] else "negative",
        counterfactual_outcomes=params.get("counterfactual_outcomes", True),
        multiple_testing=params.get("multiple_testing", "holm"),
        cache=params.get("cache"),
    )
