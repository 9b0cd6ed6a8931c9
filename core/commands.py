"""What the management commands people run by hand share: help that lists only their own options."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandParser

# Django's options for its own development work: accepted as ever, left out of `--help`, where a
# person reading `hookbridge serve --help` wants this command's options, not Django's plumbing.
HIDDEN_BASE_ARGUMENTS = {"--version", "--settings", "--pythonpath", "--traceback", "--no-color", "--force-color"}


class Command(BaseCommand):
    suppressed_base_arguments = HIDDEN_BASE_ARGUMENTS

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        # Django adds --skip-checks past suppressed_base_arguments' reach; still accepted, not shown.
        for action in parser._actions:
            if "--skip-checks" in action.option_strings:
                action.help = argparse.SUPPRESS
        return parser


def field_problems(exc: ValidationError, *, renamed: dict[str, str] | None = None) -> str:
    """A model's validation errors as a command says them: "name: …; email: …" (`renamed`: a field by the
    name its command-line argument has)."""
    names = renamed or {}
    return "; ".join(f"{names.get(field, field)}: {' '.join(errors)}" for field, errors in exc.message_dict.items())
