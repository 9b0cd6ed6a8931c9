from __future__ import annotations

from django.apps import AppConfig


class QuestionsConfig(AppConfig):
    name = "questions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connect the receivers of questions.signals: the wake-up first (a blocked agent hears before any
        # page is rendered), then the pushes; and the kinds check.
        from questions import wakeups  # noqa: I001, F401
        from questions import checks, live  # noqa: F401
