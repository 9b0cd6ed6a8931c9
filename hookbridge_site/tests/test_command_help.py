"""`hookbridge <command> --help`: every option says what it does, and Django's own plumbing stays out of it."""

from __future__ import annotations

import argparse
import re

import pytest
from django.core.management import get_commands, load_command_class

from hookbridge_site import cli


def visible_actions(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.Action]]:
    found: list[tuple[str, argparse.Action]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += visible_actions(sub, f"{prefix}{name} ")
        elif action.help != argparse.SUPPRESS:
            found.append((prefix, action))
    return found


@pytest.mark.parametrize("short", list(cli.COMMANDS))
def test_every_option_of_every_command_has_help(short: str) -> None:
    name = cli.COMMANDS[short]
    command = load_command_class(get_commands()[name], name)
    parser = command.create_parser("hookbridge", short)
    missing = [
        f"{prefix}{action.option_strings or action.dest}"
        for prefix, action in visible_actions(parser)
        if not action.help
    ]
    assert missing == [], f"hookbridge {short}: options without help"


@pytest.mark.parametrize("short", [short for short, name in cli.COMMANDS.items() if name != "migrate"])
def test_the_help_leaves_djangos_plumbing_out(short: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main([short, "--help"])
    text = capsys.readouterr().out
    assert text.startswith(f"usage: hookbridge {short}")
    for noise in ("--settings", "--pythonpath", "--traceback", "--no-color", "--force-color", "--skip-checks"):
        assert not re.search(rf"{noise}(?![\w-])", text), f"hookbridge {short} --help shows {noise}"


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        (["-v"], ["--verbosity", "2"]),
        (["--verbose", "--port", "9000"], ["--verbosity", "2", "--port", "9000"]),
        (["-v", "--port", "9000"], ["--verbosity", "2", "--port", "9000"]),
        (["-v", "0"], ["-v", "0"]),
    ],
)
def test_a_bare_v_means_verbose(said: list[str], meant: list[str]) -> None:
    assert cli.verbose_as_django_says(said) == meant
