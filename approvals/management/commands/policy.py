"""`manage.py policy apply FILE | export --project P | test FILE [--last N]` (installed: `hookbridge policy …`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from approvals import policyfile
from core import commands
from projects.models import Project


class Command(commands.Command):
    help = "A project's approval rules and policies as a YAML file: apply it, export it, test it against history."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="apply|test|export")
        apply = actions.add_parser("apply", help="replace the file's project's rules and policies with the file's")
        apply.add_argument("file", help="the policy file (YAML, one project)")
        test = actions.add_parser("test", help="replay the project's past approvals against the file; change nothing")
        test.add_argument("file", help="the policy file to test (YAML, one project)")
        test.add_argument("--last", type=int, default=500, help="how many of the latest approvals (default 500)")
        export = actions.add_parser("export", help="print a project's rules and policies as a policy file")
        export.add_argument("--project", required=True, help="the project's name")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "export":
            project = Project.objects.named(options["project"]).first()
            if project is None:
                raise CommandError(f"--project: no project named {options['project']!r} (hookbridge project list)")
            self.stdout.write(policyfile.export(project), ending="")
            return
        found = self._load(options["file"])
        if action == "apply":
            changes = policyfile.apply(found)
            for warning in found.warnings:
                self.stderr.write(f"warning: {warning}")
            self.stdout.write(f"Applied {options['file']} to {found.project}: {len(found.rules)} rules, "
                              f"{len(found.approvals)} approval policies.")  # fmt: skip
            for change in changes or ["(nothing changed)"]:
                self.stdout.write(f"  {change}")
            return
        last = options["last"]
        if last < 1:
            raise CommandError("--last: at least 1")
        read, differences = policyfile.replay(found, last)
        self.stdout.write(f"Replayed {read} of {found.project}'s latest approvals against {options['file']}: "
                          f"{len(differences)} would be decided otherwise.")  # fmt: skip
        for difference in differences:
            self.stdout.write(str(difference))

    @staticmethod
    def _load(name: str) -> policyfile.PolicyFile:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"file: cannot read {name}: {exc}") from None
        try:
            return policyfile.load(text, source=name)
        except policyfile.PolicyFileError as exc:
            raise CommandError(f"{exc} (nothing was changed)") from None
