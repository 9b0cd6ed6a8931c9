"""A person's reusable replies: the ones they saved, and the free-text answers they gave lately.

Both are offered beside every answer box on the pages they answer from (hookbridge.js builds the
buttons from one JSON block per page): a card is pushed to every dashboard alike, so what is one
person's own cannot be in the card itself.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import IntegrityError, transaction

from questions.models import Answer, SavedReply

MAX_SAVED = 50
RECENT = 5
LONGEST = 2000  # characters of one saved reply, as SavedReply.text allows
# Kinds whose answer is a person's own words (not a choice, a rating or a structured decision).
FREE_TEXT_KINDS = ("question", "one-question", "help")


def recent(user: Any) -> list[str]:
    """This person's latest typed answers, newest first, each once."""
    texts: list[str] = []
    answers = Answer.objects.filter(answered_by_user=user, option="", question__kind__in=FREE_TEXT_KINDS)
    for text in answers.order_by("-created_at").values_list("text", flat=True)[:50]:
        if text.strip() and text not in texts and len(text) <= LONGEST:
            texts.append(text)
        if len(texts) == RECENT:
            break
    return texts


def for_person(user: Any) -> dict[str, list[str]]:
    """What a page offers this person: {"saved": [...], "recent": [...]} (recent ones not saved already)."""
    if not getattr(user, "is_authenticated", False):
        return {"saved": [], "recent": []}
    saved = list(SavedReply.objects.filter(user=user).values_list("text", flat=True))
    return {"saved": saved, "recent": [text for text in recent(user) if text not in saved]}


class SavedReplyForm(forms.Form):
    text = forms.CharField(
        max_length=LONGEST, strip=True, label="Reply", widget=forms.Textarea(attrs={"rows": 3, "maxlength": LONGEST})
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_text(self) -> str:
        text: str = self.cleaned_data["text"]
        if SavedReply.objects.filter(user=self.user, text=text).exists():
            raise forms.ValidationError("You have saved this reply already.")
        if SavedReply.objects.filter(user=self.user).count() >= MAX_SAVED:
            raise forms.ValidationError(f"At most {MAX_SAVED} saved replies: delete one to save another.")
        return text

    def save(self) -> SavedReply | None:
        """The new reply, or None when the same text was saved meanwhile (a double click): nothing twice."""
        try:
            # Atomic so a duplicate's IntegrityError rolls back only this insert, inside a request's transaction.
            with transaction.atomic():
                return SavedReply.objects.create(user=self.user, text=self.cleaned_data["text"])
        except IntegrityError:
            return None
