from __future__ import annotations

from django.apps import AppConfig


class QuestionsConfig(AppConfig):
    name = "questions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connect the receivers of questions.signals: wake-ups and pushes, the kinds check.
        from questions import checks, live  # noqa: F401
