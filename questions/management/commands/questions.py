"""Answer from a terminal: list, show, answer and dismiss questions, with the dashboard's rules."""

from __future__ import annotations

import getpass
import json
import uuid
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone
from django.utils.timesince import timesince

from core import commands, jsonapi
from questions.kinds import InvalidAnswer
from questions.models import AlreadyResolved, Question


def _load(question_id: str) -> Question:
    try:
        pk = uuid.UUID(question_id)
    except ValueError:
        raise CommandError(f"{question_id!r} is not a question id") from None
    question = Question.objects.select_related("answer").filter(pk=pk).first()
    if question is None:
        raise CommandError(f"no question {question_id}")
    return question


class Command(commands.Command):
    help = "List, show, answer or dismiss questions from a terminal (recorded as answered by your OS user)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("list", help="pending questions, oldest first")
        show = actions.add_parser("show", help="one question in full")
        show.add_argument("id", help="the question's id, as `list` prints it")
        answer = actions.add_parser(
            "answer", help="answer with text, an --option value, or --json for structured kinds"
        )
        answer.add_argument("id", help="the question's id, as `list` prints it")
        answer.add_argument("text", nargs="?", help="the answer's text")
        answer.add_argument("--option", help="the value of one of the question's options")
        answer.add_argument("--json", dest="json_value", help="a structured answer, as the JSON API takes it")
        dismiss = actions.add_parser("dismiss", help="decline to answer; the agent proceeds on its own")
        dismiss.add_argument("id", help="the question's id, as `list` prints it")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        who = f"{getpass.getuser()} (terminal)"
        if action == "list":
            pending = list(Question.objects.pending())
            if not pending:
                self.stdout.write("No questions are waiting.")
            for question in pending:
                age = timesince(question.created_at, timezone.now())
                first = str(question).replace("\n", " ")
                self.stdout.write(f"{question.pk}  {question.asker_name:<16} {age:>12} ago  [{question.kind}] {first}")
        elif action == "show":
            question = _load(options["id"])
            self.stdout.write(
                f"{question.get_kind_display()} from {question.asker_name}, {question.get_status_display().lower()}"
            )
            self.stdout.write(question.text)
            for option in question.options:
                self.stdout.write(f"  --option {option['value']}: {option['label']}")
            if question.payload:
                self.stdout.write(json.dumps(question.payload, indent=2, ensure_ascii=False))
            if not question.is_pending:
                self.stdout.write(question.resolution_text())
        elif action == "answer":
            question = _load(options["id"])
            value: Any = options["text"]
            if options["json_value"] is not None:
                try:
                    value = jsonapi.loads(options["json_value"])
                except jsonapi.BadJSON as exc:
                    raise CommandError(f"--json {exc}") from None
            problem = jsonapi.unstorable({"--json" if options["json_value"] is not None else "text": value})
            if problem:
                raise CommandError(problem)
            try:
                reply = question.kind_spec.parse(question, value, options["option"])
                answer = question.record_answer(reply=reply, source="terminal", by_name=who)
            except (InvalidAnswer, AlreadyResolved) as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"Answered {question.pk} as {who}: {answer.text}")
        elif action == "dismiss":
            question = _load(options["id"])
            try:
                question.dismiss(by=who)
            except AlreadyResolved as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"Dismissed {question.pk}; {question.asker_name} will proceed on its own.")
