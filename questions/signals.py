"""What questions announce; sent on commit by questions.models (core.signals).

questions.live wakes the waiting calls and pushes the cards; notify.scheduling writes a new
question's escalation (Slack, e-mail, the webhook) and drops what an ended one no longer needs;
dashboard.watcher notes what dashboards were sent; dashboard.status redraws the status bar.
"""

from __future__ import annotations

from django.dispatch import Signal

# A question is pending: newly asked (new=True), or back after an abort (new=False). Arguments: question_id,
# new, question (the row as just written: receivers need not read it again).
question_asked = Signal()
# A question left pending: answered, dismissed, cancelled, timed out. Arguments: question_id, and answer
# (the Answer as written) when it was answered.
question_resolved = Signal()
# The agent stopped waiting on a pending question, or came back to it. Arguments: question_id.
agent_presence_changed = Signal()
# A person's allow was counted toward an approval's quorum, which is not yet met. Arguments: question_id.
vote_counted = Signal()
# Someone is answering the question (or still is). Arguments: question_id.
question_claimed = Signal()
# Many questions changed at once (a worker stopping marked its questions as left). No arguments.
questions_changed = Signal()
