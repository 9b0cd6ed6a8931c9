from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from lifecycle import timeline
from lifecycle.models import AgentSession

register = template.Library()


@register.simple_tag
def session_timeline(session: AgentSession) -> SafeString:
    return timeline.render_with_legend(session)
