"""People who sign in to the dashboard, from a shell: `user create NAME [--email E] [--admin]` (also `hookbridge user`).

A newcomer's path (issue 39): `project member P alice` needs alice to exist, and there was no command that made her.
The password is asked for twice on a terminal, or read as one line from standard input when there is none
(`printf '%s\n' "$PASSWORD" | hookbridge user create alice`); Django's password rules apply.
"""

from __future__ import annotations

import getpass
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from core import commands


def read_password() -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password (again): ") != first:
        raise CommandError("password: the two passwords differ; nothing was made")
    return first


class Command(commands.Command):
    help = "Make a person who signs in to the dashboard; give them a project role with `project member`."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="create")
        create = actions.add_parser("create", help="Make a person; the password is asked for (or read from stdin).")
        create.add_argument("name", help="Their username: letters, digits and @ . + - _")
        create.add_argument("--email", default="", help="Their e-mail address (for notifications).")
        create.add_argument("--admin", action="store_true", help="An admin: sees every project and the admin site.")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        self.create(options["name"], options["email"], admin=options["admin"])

    def create(self, name: str, email: str, *, admin: bool) -> None:
        people = get_user_model()
        person = people(username=name.strip(), email=email.strip(), is_staff=admin, is_superuser=admin)
        try:
            person.full_clean(exclude=["password"])
        except ValidationError as exc:
            raise CommandError(commands.field_problems(exc, renamed={"username": "name"})) from None
        password = read_password()
        if not password:
            raise CommandError("password: empty; nothing was made")
        try:
            validate_password(password, person)
        except ValidationError as exc:
            raise CommandError(f"password: {' '.join(exc.messages)}") from None
        person.set_password(password)
        # One row or none: a person without their password would be a half-made account.
        with transaction.atomic():
            person.save()
        role = "an admin" if admin else "a person"
        self.stdout.write(
            f"Made {role} named '{person.get_username()}'. Give them a project: "
            f"project member PROJECT {person.get_username()} --role answerer"
        )
