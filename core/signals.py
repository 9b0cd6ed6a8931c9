"""How a model tells the rest of the server that something changed: a Django signal, sent on commit.

Every domain app's models announce their changes this way and nothing else (issue 14):
the model knows nothing of who listens, so `models` never imports `live`. Each app's
`live` module connects its receivers in `AppConfig.ready()`; the dashboard's watcher
listens to the same signals. Sent on commit, so a receiver that reads the row (to
render it, or to wake a waiting call that re-reads it) sees what was written.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import models, transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

# A person was deactivated through the model (the admin, SCIM, a command): sent on commit with user_id and
# username, by tokens.signals. Each app lets go of what it holds of theirs. (A bulk update sends nothing: the
# periodic access checks still close its sockets and refuse its tokens.)
person_deactivated = Signal()


def send_on_commit(signal: Signal, sender: type[models.Model], **kwargs: Any) -> None:
    """Send `signal` once the transaction in hand commits (at once outside one)."""

    def send() -> None:
        # Robust: one failing receiver (a push to a dashboard) must not stop the others (a wake-up).
        for receiver, result in signal.send_robust(sender=sender, **kwargs):
            if isinstance(result, Exception):
                logger.warning("%s failed for %s", getattr(receiver, "__qualname__", receiver), sender.__name__,
                               exc_info=result)  # fmt: skip

    transaction.on_commit(send, robust=True)
