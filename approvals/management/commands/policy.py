"""`manage.py policy apply FILE | export --project P | test FILE [--last N] | suggest [--project P] [--mail]`
(installed: `hookbridge policy …`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.core.management.base import CommandError, CommandParser
from django.urls import reverse

from approvals import policyfile, suggestions
from core import commands
from projects.models import Project, admin_addresses


class Command(commands.Command):
    help = "A project's approval rules and policies as a YAML file: apply it, export it, test it against history."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="apply|test|export|suggest")
        apply = actions.add_parser("apply", help="replace the file's project's rules and policies with the file's")
        apply.add_argument("file", help="the policy file (YAML, one project)")
        test = actions.add_parser("test", help="replay the project's past approvals against the file; change nothing")
        test.add_argument("file", help="the policy file to test (YAML, one project)")
        test.add_argument("--last", type=int, default=500, help="how many of the latest approvals (default 500)")
        export = actions.add_parser("export", help="print a project's rules and policies as a policy file")
        export.add_argument("--project", required=True, help="the project's name")
        suggest = actions.add_parser(
            "suggest", help="the rules people's own decisions suggest (weekly, with --mail, from a timer)"
        )
        suggest.add_argument("--project", help="one project (default: every project)")
        suggest.add_argument("--days", type=int, default=suggestions.DAYS, help="how far back (default 14 days)")
        suggest.add_argument(
            "--at-least", type=int, default=suggestions.AT_LEAST, help="allowed at least this often (default 5)"
        )
        suggest.add_argument("--mail", action="store_true", help="mail each project's admins their suggestions")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "export":
            project = Project.objects.named(options["project"]).first()
            if project is None:
                raise CommandError(f"--project: no project named {options['project']!r} (hookbridge project list)")
            self.stdout.write(policyfile.export(project), ending="")
            return
        if action == "suggest":
            self._suggest(options)
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

    def _suggest(self, options: dict[str, Any]) -> None:
        if options["days"] < 1 or options["at_least"] < 1:
            raise CommandError("--days and --at-least: at least 1")
        projects = list(Project.objects.all())
        if options["project"]:
            projects = list(Project.objects.named(options["project"]))
            if not projects:
                raise CommandError(f"--project: no project named {options['project']!r} (hookbridge project list)")
        found = suggestions.suggest(projects, options["days"], options["at_least"])
        self.stdout.write(f"{len(found)} rules suggested by the last {options['days']} days of approvals.")
        by_project: dict[Project, list[suggestions.Suggestion]] = {}
        for suggestion in found:
            self.stdout.write(f"  {suggestion.project}: {suggestion}")
            by_project.setdefault(suggestion.project, []).append(suggestion)
        if not options["mail"]:
            return
        if not settings.HOOKBRIDGE_EMAIL_CONFIGURED:
            raise CommandError("--mail: e-mail is not set up (EMAIL_URL, docs/notify.md)")
        page = settings.HOOKBRIDGE_PUBLIC_URL.rstrip("/") + reverse("admin:approvals_approvalrule_changelist")
        for project, theirs in by_project.items():
            to = admin_addresses(project.pk)
            if not to:
                self.stderr.write(f"{project}: no admin has an e-mail address; its suggestions were not sent")
                continue
            lines = [f"- {suggestion}" for suggestion in theirs]
            text = "\n".join([f"What people in {project} keep allowing by hand:", "", *lines, "",
                              f"Accept or ignore each on the rules page: {page}"])  # fmt: skip
            subject = f"Hook Bridge: {len(theirs)} rule{'s' if len(theirs) != 1 else ''} suggested in {project}"
            send_mail(subject, text, settings.HOOKBRIDGE_EMAIL_FROM, to)
            self.stdout.write(f"Mailed {project}'s suggestions to {', '.join(to)}.")

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
