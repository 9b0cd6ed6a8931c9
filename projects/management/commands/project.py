"""Projects and their members, from a shell: `project create|member|list` (also `hookbridge project …`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from core import commands
from projects.models import Project, Role


def project_named(name: str) -> Project:
    project = Project.objects.named(name).first()
    if project is None:
        known = ", ".join(Project.objects.values_list("name", flat=True)) or "none"
        raise CommandError(f"no project named '{name}' (projects: {known}); make it with: project create {name}")
    return project


class Command(commands.Command):
    help = "Make projects and say who is in them: viewers see its work, answerers also answer, admins also manage."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="create|member|list")
        create = actions.add_parser("create", help="Make a project.")
        create.add_argument(
            "name",
            help="Letters, digits, '.', '_', '-'; agents naming it (or working in a folder so named) land in it.",
        )
        member = actions.add_parser("member", help="Give a person a role in a project, or take them out of it.")
        member.add_argument("name", help="The project.")
        member.add_argument("username", help="The person's username.")
        member.add_argument("--role", choices=Role.values, default=None, help="viewer, answerer or admin.")
        member.add_argument("--remove", action="store_true", help="Take the person out of the project.")
        actions.add_parser("list", help="Every project, with its members and their roles.")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "create":
            self.create(options["name"])
        elif action == "member":
            self.member(options["name"], options["username"], options["role"], remove=options["remove"])
        else:
            self.list()

    def create(self, name: str) -> None:
        project = Project(name=name.strip())
        try:
            project.full_clean()
        except ValidationError as exc:
            raise CommandError(commands.field_problems(exc)) from None
        if Project.objects.named(project.name).exists():
            raise CommandError(f"name: a project named '{project.name}' exists already")
        with transaction.atomic():
            project.save()
        self.stdout.write(
            f"Created project '{project.name}'. Add people with: project member {project.name} USERNAME --role answerer"
        )

    def member(self, name: str, username: str, role: str | None, *, remove: bool) -> None:
        if remove == (role is not None):
            raise CommandError("say either --role viewer|answerer|admin or --remove")
        project = project_named(name)
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no person named '{username}'; make them with: hookbridge user create {username}")
        if remove:
            if not project.remove_member(user):
                raise CommandError(f"'{username}' is not a member of '{project.name}'")
            self.stdout.write(f"Took '{username}' out of '{project.name}'.")
            return
        assert role is not None
        project.set_member(user, role)
        self.stdout.write(f"'{username}' is now {role} in '{project.name}'.")

    def list(self) -> None:
        for project in Project.objects.prefetch_related("memberships__user"):
            default = " (default)" if project.is_default else ""
            members = (
                ", ".join(f"{m.user.get_username()} ({m.role})" for m in project.memberships.all()) or "no members"
            )
            self.stdout.write(f"{project.name}{default}: {members}")
