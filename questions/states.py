"""A question's states and why one was cancelled: what the models store and the words describe."""

from __future__ import annotations

from django.db import models


class Status(models.TextChoices):
    PENDING = "pending", "Pending"
    ANSWERED = "answered", "Answered"
    CANCELLED = "cancelled", "Cancelled"
    TIMED_OUT = "timed_out", "Timed out"


class CancelReason(models.TextChoices):
    # Before the re-attach window existed, a dropped connection cancelled at once; old rows keep it.
    CLIENT_DISCONNECTED = "client_disconnected", "Client disconnected"
    CLIENT_CANCELLED = "client_cancelled", "Aborted at the agent"
    AGENT_GONE = "agent_gone", "The agent stopped waiting and did not ask again"
    DISMISSED = "dismissed", "Dismissed by a person"
    # An approval whose host stopped waiting: the person answered in the terminal, Esc, or the hook timed out
    # (agent_left_reason says which, where the server knows).
    HOST_DECIDED = "host_decided", "The host stopped waiting"
    # An approval whose connection the server itself cut as it stopped: nobody decided it (issue 55, point 5).
    SERVER_RESTARTED = "server_restarted", "The server restarted while the host waited"
