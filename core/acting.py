"""Who is acting, and from where, for the audit record: set once per request, read when a model's write method
records what changed (audit.chain.record).

The site's router sets the origin of every HTTP request (pages, /mcp, the hooks endpoints, the API); whoever
authenticates the caller sets the actor (a person's session, a token); in a process that serves nothing (a
management command, Django's shell) its OS user acts. ContextVars: each request has its own, and the database
thread running a request's ORM work sees the request's (asgiref copies the context). A server's own work (the
sweeper, the notify dispatcher) is the system's.
"""

from __future__ import annotations

import getpass
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from core import runtime

# W3C Trace Context: version-traceid-parentid-flags, lower-case hex; an all-zero trace id is invalid.
TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


@dataclass(frozen=True)
class Origin:
    ip: str = ""
    user_agent: str = ""
    request_id: str = ""
    trace_id: str = ""


@dataclass(frozen=True)
class Actor:
    kind: str  # person, token, system
    name: str
    id: str = ""


SYSTEM = Actor("system", "Hook Bridge")

origin_now: ContextVar[Origin | None] = ContextVar("acting_origin", default=None)
# An Actor, or a function making one when first needed (a page's person is only looked up if something changes).
actor_now: ContextVar[Actor | Callable[[], Actor] | None] = ContextVar("acting_actor", default=None)


def trace_id_of(traceparent: str) -> str:
    """The trace id a `traceparent` header carries, or "" when it carries none that is valid."""
    found = TRACEPARENT.match(traceparent.strip())
    if found is None or found.group(1) == "0" * 32:
        return ""
    return found.group(1)


def origin_of(ip: str, user_agent: str, traceparent: str, trace_id: str = "") -> Origin:
    """A request's origin: its address, agent, a request id of its own, and its trace id: `trace_id` (the tracing
    span's), else the caller's `traceparent`'s, else the request id."""
    request_id = uuid.uuid4().hex
    traced = trace_id or trace_id_of(traceparent) or request_id
    return Origin(ip=ip[:64], user_agent=user_agent[:300], request_id=request_id, trace_id=traced)


def origin() -> Origin:
    return origin_now.get() or Origin()


def person(user: Any) -> Actor:
    return Actor("person", user.get_username(), str(user.pk))


def token(agent_token: Any) -> Actor:
    """A token, with the person it acts for when it has one (an answer token of alice's: "token bot (of alice)")."""
    owner = agent_token.user if getattr(agent_token, "user_id", None) else None
    of = f" (of {owner.get_username()})" if owner is not None else ""
    return Actor("token", f"token {agent_token.name}{of}", str(agent_token.pk))


def command_line() -> Actor:
    return Actor("person", f"{getpass.getuser()} (command line)")


def actor() -> Actor:
    """Whoever acts in this request or command. Nobody said: in a server (its loop bound), the server's own work (a
    sweep, a timeout); in any other process (Django's shell, createsuperuser), its OS user at the command line."""
    now = actor_now.get()
    if now is None:
        return SYSTEM if runtime.server_loop is not None else command_line()
    if callable(now):
        made = now()
        actor_now.set(made)
        return made
    return now


def by(user: Any = None, agent_token: Any = None) -> Actor:
    """A signed-in person, else a token, else whoever acts now."""
    if user is not None and getattr(user, "is_authenticated", False):
        return person(user)
    if agent_token is not None:
        return token(agent_token)
    return actor()


class TraceIdFilter:
    """A log record made while serving a request carries its trace id (`%(trace)s`: " [trace <id>]", else ""), so
    a line in the logs is found from an audit entry's trace_id, and from the caller's own trace."""

    def filter(self, record: Any) -> bool:
        now = origin_now.get()
        record.trace = f" [trace {now.trace_id}]" if now is not None and now.trace_id else ""
        return True
