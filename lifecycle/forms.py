"""Forms people fill in about sessions."""

from __future__ import annotations

from django import forms

MAX_MESSAGE = 4000


class MessageForm(forms.Form):
    """A message to a session's agent, handed over at its host's next hook call."""

    text = forms.CharField(
        label="Message to the agent",
        max_length=MAX_MESSAGE,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={"required": "Write the message first.", "max_length": f"At most {MAX_MESSAGE} characters."},
    )
