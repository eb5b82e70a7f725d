"""Commands refuse an --alpha outside (0, 1) (and --top-fraction outside (0, 1]) with a specific
CommandError, before doing any work (argparse type functions in core/cli_args.py)."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ST_ARGS = ["rows.csv", "--protected", "g", "--protected-value", "1", "--target", "y", "--negative", "0", "--out", "x"]


@pytest.mark.parametrize("value", ["0", "1", "-0.05", "1.5", "nan", "five"])
@pytest.mark.parametrize("command,args", [("relative_fairness", ["some-study"]), ("situation_testing", ST_ARGS)])
def test_alpha_outside_zero_one_is_a_command_error(command, args, value):
    with pytest.raises(CommandError, match=r"--alpha must be a (significance level strictly between 0 and 1|number)"):
        call_command(command, *args, "--alpha", value)


@pytest.mark.parametrize("command,args", [("relative_fairness", ["some-study"]), ("situation_testing", ST_ARGS)])
def test_alpha_given_as_keyword_is_checked_too(command, args):
    with pytest.raises(CommandError, match="--alpha must be a significance level"):
        call_command(command, *args, alpha=1.0)


def test_top_fraction_given_as_keyword_is_checked_too():
    with pytest.raises(CommandError, match=r"--top-fraction must be in \(0, 1\]"):
        call_command("export_bonuses", "some-study", top_fraction=2)
