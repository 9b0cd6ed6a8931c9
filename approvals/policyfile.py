"""The policy as code: one project's rules and approval policies in a YAML file the team keeps in its repository.

    project: shop
    rules:
      - allow: {tool: Bash, command_prefix: "npm test"}
      - deny: {tool: Bash, command_prefix: "git push --force", message: "Never force-push; open a pull request"}
    approvals:
      - name: pushes need two
        match: {tool: Bash, command_prefix: "git push"}
        quorum: 2
        self_approval: false
        escalate: [{after: 5m, notify: "on-call:backend"}, {after: 15m, notify: admins}]
        timeout: 30m
        fallback: deny
    schedules:
      - name: backend
        people: [ann, bob]
        handoff: "09:00"
        time_zone: Europe/Berlin
        every: 7d

`load` reads and checks it whole (a refusal names the line and the field, and nothing is changed); `apply`
replaces the project's rules and policies in one transaction; `export` writes the file back from the database;
`replay` runs the project's past approvals against a file before anything changes.

Why not Cedar (cedarpy): what the file decides turns on a shell command read into the simple commands it runs,
on word prefixes and on counting distinct people over time; Cedar would only see attributes computed here first,
so it would add a second language and a compiled dependency without deciding anything itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import yaml
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime, parse_time

from approvals import policies, rules
from approvals.models import ApprovalPolicy, ApprovalRule, CompiledRule, Fallback
from audit import chain
from core import acting
from projects.models import OnCallSchedule, OnCallTurn, Project, Role, on_call_name
from questions.kinds import Kind
from questions.models import Question, Status
from tokens.models import AgentToken

RULE_KEYS = {"tool", "command", "command_prefix", "path", "pattern", "folder", "message", "reason", "expires", "owner"}
MATCH_KEYS = {"host", "tool", "command_prefix", "path", "destructive", "token", "folder"}
APPROVAL_KEYS = {"name", "match", "quorum", "self_approval", "deciders", "escalate", "timeout", "fallback"}
SCHEDULE_KEYS = {"name", "people", "handoff", "time_zone", "every", "starts"}
FILE_KEYS = ("project", "rules", "approvals", "schedules")
NOTIFY_CHANNELS = ("slack", "telegram", "discord", "teams", "email", "push", "webhook", "admins")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d)?$")


class PolicyFileError(Exception):
    """What is wrong with the file: where (`line`, 1-based) and which field."""

    def __init__(self, source: str, line: int | None, where: str, message: str) -> None:
        self.line, self.where = line, where
        at = f"{source}:{line}" if line else source
        super().__init__(f"{at}: {where}: {message}" if where else f"{at}: {message}")


@dataclass
class PolicyFile:
    project: Project
    source: str
    rules: list[ApprovalRule] = field(default_factory=list)
    approvals: list[ApprovalPolicy] = field(default_factory=list)
    # Each on-call schedule with its people in turn (an override is made in the admin, for a day, and kept).
    schedules: list[tuple[OnCallSchedule, list[Any]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _Reader:
    """The YAML's values with the line each came from, so every refusal can say where."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.lines: dict[tuple[Any, ...], int] = {}
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise PolicyFileError(source, mark.line + 1 if mark else None, "", f"not YAML: {exc}") from None
        if node is None:
            raise PolicyFileError(source, 1, "", "the file is empty: it needs at least `project: NAME`")
        self.data = self._value(node, ())

    def _value(self, node: yaml.Node, path: tuple[Any, ...]) -> Any:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = key_node.value
                if key in out:
                    raise PolicyFileError(self.source, key_node.start_mark.line + 1, self.name(path), f"{key} twice")
                out[str(key)] = self._value(value_node, (*path, str(key)))
                self.lines[(*path, str(key))] = key_node.start_mark.line + 1
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self._value(item, (*path, i)) for i, item in enumerate(node.value)]
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise PolicyFileError(self.source, self.lines[path], self.name(path), str(exc)) from None

    @staticmethod
    def name(path: tuple[Any, ...]) -> str:
        out = ""
        for part in path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out

    def fail(self, path: tuple[Any, ...], message: str) -> PolicyFileError:
        line = None
        for cut in range(len(path), -1, -1):
            if path[:cut] in self.lines:
                line = self.lines[path[:cut]]
                break
        return PolicyFileError(self.source, line, self.name(path), message)


def load(text: str, source: str = "policy.yaml") -> PolicyFile:
    """The file read and checked whole; PolicyFileError names the first line and field at fault."""
    read = _Reader(text, source)
    data = read.data
    if not isinstance(data, dict):
        raise read.fail((), "the file is a mapping: project, rules, approvals")
    unknown = set(data) - set(FILE_KEYS)
    if unknown:
        raise read.fail((sorted(unknown)[0],), f"not a field of a policy file ({', '.join(FILE_KEYS)})")
    name = data.get("project")
    if not isinstance(name, str) or not name.strip():
        raise read.fail(("project",), "required: the project's name")
    project = Project.objects.named(name.strip()).first()
    if project is None:
        raise read.fail(("project",), f"no project named {name!r} (hookbridge project list)")
    found = PolicyFile(project=project, source=source)
    members = set(project.memberships.values_list("user_id", flat=True))
    for i, entry in enumerate(_list(read, data, "schedules")):
        schedule, people = _schedule(read, entry, ("schedules", i), project)
        if any(schedule.name.lower() == known.name.lower() for known, _ in found.schedules):
            raise read.fail(("schedules", i, "name"), f"{schedule.name!r} twice")
        found.warnings += [
            f"on-call:{schedule.name}: {person.get_username()} is not a member of {project}, so cannot decide "
            "while on call (hookbridge project member)"
            for person in people
            if person.pk not in members and not getattr(person, "is_superuser", False)
        ]
        found.schedules.append((schedule, people))
    on_call = {known.name.lower() for known, _ in found.schedules}
    on_call |= {name.lower() for name in OnCallSchedule.objects.filter(project=project).values_list("name", flat=True)}
    for i, entry in enumerate(_list(read, data, "rules")):
        found.rules.append(_rule(read, entry, ("rules", i), project, i))
    for i, entry in enumerate(_list(read, data, "approvals")):
        found.approvals.append(_approval(read, entry, ("approvals", i), project, i, on_call, found.warnings))
    return found


def _person(read: _Reader, value: Any, path: tuple[Any, ...]) -> Any:
    person = get_user_model().objects.filter(username=str(value)).first() if isinstance(value, str) else None
    if person is None:
        raise read.fail(path, f"no person named {value!r}")
    return person


def _schedule(read: _Reader, entry: Any, path: tuple[Any, ...], project: Project) -> tuple[OnCallSchedule, list[Any]]:
    if not isinstance(entry, dict):
        raise read.fail(path, "each schedule is a mapping: {name: backend, people: [ann, bob], handoff: '09:00'}")
    unknown = set(entry) - SCHEDULE_KEYS
    if unknown:
        raise read.fail((*path, sorted(unknown)[0]), f"not a field of a schedule ({', '.join(sorted(SCHEDULE_KEYS))})")
    schedule = OnCallSchedule(project=project, name=_text(read, entry, path, "name", 100), source="")
    if not schedule.name:
        raise read.fail((*path, "name"), "required: what a policy names (on-call:NAME)")
    people = entry.get("people")
    if not isinstance(people, list) or not people:
        raise read.fail((*path, "people"), "a list of usernames, in the order they take turns: [ann, bob]")
    persons = [_person(read, name, (*path, "people", j)) for j, name in enumerate(people)]
    if "handoff" in entry:
        handoff = entry["handoff"]
        # YAML reads an unquoted 09:00 as a number of minutes (sexagesimal): 540.
        text = f"{handoff // 60:02d}:{handoff % 60:02d}" if isinstance(handoff, int) and handoff >= 0 else str(handoff)
        parsed = parse_time(text) if isinstance(handoff, str | int) and not isinstance(handoff, bool) else None
        if parsed is None:
            raise read.fail((*path, "handoff"), 'a time of day: "09:00"')
        schedule.handoff = parsed
    if "time_zone" in entry:
        schedule.time_zone = _text(read, entry, path, "time_zone", 64)
    if "every" in entry:
        seconds = _duration(read, entry["every"], (*path, "every"))
        if seconds < 86400 or seconds % 86400:
            raise read.fail((*path, "every"), "whole days: 1d, 7d, 14d")
        schedule.rotation_days = int(seconds // 86400)
    if "starts" in entry:
        value = entry["starts"]
        day = value if isinstance(value, date) and not isinstance(value, datetime) else parse_date(str(value))
        if day is None:
            raise read.fail((*path, "starts"), "a date (2027-01-04): the first person's first shift starts then")
        schedule.starts_on = day
    _checked(read, path, schedule, {"rotation_days": "every", "starts_on": "starts"})
    return schedule, persons


def _list(read: _Reader, data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise read.fail((key,), "a list (each item starting with -)")
    return value


def _text(read: _Reader, entry: dict[str, Any], path: tuple[Any, ...], key: str, most: int) -> str:
    value = entry.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise read.fail((*path, key), "text (put it in quotes)")
    if len(value) > most:
        raise read.fail((*path, key), f"at most {most} characters")
    return value.strip()


def _checked(read: _Reader, path: tuple[Any, ...], model: Any, names: dict[str, str]) -> None:
    """The model's own checks (what the admin would refuse), named as the file names them."""
    try:
        model.full_clean(exclude=["project", "owner", "token"])
    except ValidationError as exc:
        problems = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        key, messages = next(iter(problems.items()))
        where = names.get(key, key)
        parts = tuple(where.split(".")) if where and where != "__all__" else ()
        raise read.fail((*path, *parts), " ".join(messages)) from None


def _rule(read: _Reader, entry: Any, path: tuple[Any, ...], project: Project, i: int) -> ApprovalRule:
    if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in ("allow", "deny"):
        raise read.fail(path, "each rule is `- allow: {…}` or `- deny: {…}`")
    action, body = next(iter(entry.items()))
    path = (*path, action)
    if not isinstance(body, dict):
        raise read.fail(path, 'a mapping: {tool: Bash, command_prefix: "npm test"}')
    unknown = set(body) - RULE_KEYS
    if unknown:
        raise read.fail((*path, sorted(unknown)[0]), f"not a field of a rule ({', '.join(sorted(RULE_KEYS))})")
    if not body.get("tool"):
        raise read.fail((*path, "tool"), "required: the tool's name (Bash, Edit, mcp__.*)")
    rule = ApprovalRule(
        position=(i + 1) * 10,
        action=action,
        tool_pattern=_text(read, body, path, "tool", 200),
        command=_text(read, body, path, "command", 2000),
        command_prefix=_text(read, body, path, "command_prefix", 500),
        path=_text(read, body, path, "path", 500),
        input_pattern=_text(read, body, path, "pattern", 500),
        folder=_text(read, body, path, "folder", 500),
        message=_text(read, body, path, "message", 1000),
        reason=_text(read, body, path, "reason", 500),
        project=project,
        source="",
    )
    if "expires" in body:
        rule.expires_at = _when(read, body["expires"], (*path, "expires"))
    if body.get("owner"):
        owner = get_user_model().objects.filter(username=str(body["owner"])).first()
        if owner is None:
            raise read.fail((*path, "owner"), f"no person named {body['owner']!r}")
        rule.owner = owner
    names = {"tool_pattern": "tool", "input_pattern": "pattern", "__all__": ""}
    _checked(read, path, rule, names)
    return rule


def _approval(
    read: _Reader,
    entry: Any,
    path: tuple[Any, ...],
    project: Project,
    i: int,
    on_call: set[str],
    warnings: list[str],
) -> ApprovalPolicy:
    if not isinstance(entry, dict):
        raise read.fail(path, "each approval policy is a mapping with a name")
    unknown = set(entry) - APPROVAL_KEYS
    if unknown:
        raise read.fail((*path, sorted(unknown)[0]), f"not a field ({', '.join(sorted(APPROVAL_KEYS))})")
    name = _text(read, entry, path, "name", 200)
    if not name:
        raise read.fail((*path, "name"), "required: what people call this policy")
    match = entry.get("match") or {}
    if not isinstance(match, dict):
        raise read.fail((*path, "match"), 'a mapping: {tool: Bash, command_prefix: "git push"}')
    unknown = set(match) - MATCH_KEYS
    if unknown:
        raise read.fail((*path, "match", sorted(unknown)[0]), f"not a field of match ({', '.join(sorted(MATCH_KEYS))})")
    here = (*path, "match")
    policy = ApprovalPolicy(
        project=project,
        position=(i + 1) * 10,
        name=name,
        host=_text(read, match, here, "host", 40),
        tool_pattern=_text(read, match, here, "tool", 200),
        command_prefix=_text(read, match, here, "command_prefix", 500),
        path=_text(read, match, here, "path", 500),
        folder=_text(read, match, here, "folder", 500),
        source="",
    )
    if "destructive" in match:
        if not isinstance(match["destructive"], bool):
            raise read.fail((*here, "destructive"), "true or false")
        policy.destructive = match["destructive"]
    if match.get("token"):
        token = AgentToken.objects.filter(name=str(match["token"]), project__in=[project, None]).first()
        if token is None:
            raise read.fail((*here, "token"), f"no agent token named {match['token']!r} in {project}")
        policy.token = token
    quorum = entry.get("quorum", 1)
    if isinstance(quorum, bool) or not isinstance(quorum, int) or not 1 <= quorum <= 20:
        raise read.fail((*path, "quorum"), "a whole number from 1 to 20: how many distinct people must allow")
    policy.quorum = quorum
    self_approval = entry.get("self_approval", True)
    if not isinstance(self_approval, bool):
        raise read.fail((*path, "self_approval"), "true or false")
    policy.self_approval = self_approval
    deciders = entry.get("deciders") or []
    if not isinstance(deciders, list):
        raise read.fail((*path, "deciders"), 'a list: ["role:admin", "ann"]')
    for j, decider in enumerate(deciders):
        where = (*path, "deciders", j)
        if not isinstance(decider, str) or not decider.strip():
            raise read.fail(where, "a username, role:viewer|answerer|admin, or on-call:NAME")
        if decider.startswith("role:"):
            if decider[5:] not in Role.values:
                raise read.fail(where, f"roles are {', '.join('role:' + r for r in Role.values)}")
        elif (schedule := on_call_name(decider)) is not None:
            _known_schedule(read, schedule, where, on_call)
        elif not get_user_model().objects.filter(username=decider).exists():
            raise read.fail(where, f"no person named {decider!r}")
    policy.deciders = [str(d) for d in deciders]
    if "timeout" in entry:
        policy.timeout_seconds = _duration(read, entry["timeout"], (*path, "timeout"))
    fallback = entry.get("fallback", Fallback.DENY)
    if fallback not in Fallback.values:
        raise read.fail((*path, "fallback"), f"one of {', '.join(Fallback.values)}")
    policy.fallback = fallback
    policy.escalate = _escalate(read, entry.get("escalate") or [], (*path, "escalate"), name, on_call, warnings)
    names = {"tool_pattern": "match.tool", "command_prefix": "match.command_prefix", "__all__": ""}
    _checked(read, path, policy, names)
    return policy


def _known_schedule(read: _Reader, schedule: str, path: tuple[Any, ...], on_call: set[str]) -> None:
    if schedule.lower() not in on_call:
        known = ", ".join(sorted(on_call)) or "none"
        raise read.fail(path, f"no on-call schedule named {schedule!r} in this file or the project (known: {known})")


def _escalate(
    read: _Reader, steps: Any, path: tuple[Any, ...], name: str, on_call: set[str], warnings: list[str]
) -> list[dict[str, Any]]:
    if not isinstance(steps, list):
        raise read.fail(path, "a list of steps: [{after: 5m, notify: slack}]")
    out: list[dict[str, Any]] = []
    for j, step in enumerate(steps):
        where = (*path, j)
        if not isinstance(step, dict) or set(step) - {"after", "notify"} or "notify" not in step:
            raise read.fail(where, "a step is {after: 5m, notify: slack|email|push|webhook|admins|on-call:NAME}")
        notify = step["notify"]
        schedule = on_call_name(notify) if isinstance(notify, str) else None
        if not isinstance(notify, str) or not (notify in NOTIFY_CHANNELS or schedule is not None):
            raise read.fail((*where, "notify"), f"one of {', '.join(NOTIFY_CHANNELS)}, or on-call:NAME")
        if schedule is not None and schedule.lower() not in on_call:
            # Said, not refused (a decider naming no schedule is refused: nobody could decide): the team may add
            # the schedule after the policy, and until then the other steps still reach people.
            warnings.append(
                f"{name}: escalate step {j + 1} ({notify}) reaches nobody until the project has an on-call "
                f"schedule named {schedule!r} (schedules: in this file, or the admin)"
            )
        out.append({"after": _duration(read, step.get("after", 0), (*where, "after")), "notify": notify})
    return out


def _duration(read: _Reader, value: Any, path: tuple[Any, ...]) -> float:
    if isinstance(value, bool):
        raise read.fail(path, "a duration: 30s, 5m, 2h, 1d (or seconds)")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value).strip())
        if match is None:
            raise read.fail(path, "a duration: 30s, 5m, 2h, 1d (or seconds)")
        seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2) or "s"]
    if not 0 <= seconds <= 30 * 86400:
        raise read.fail(path, "from 0 seconds to 30 days")
    return seconds


def _when(read: _Reader, value: Any, path: tuple[Any, ...]) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value)
    text = str(value).strip()
    match = _DURATION.match(text)
    if match is not None and match.group(2) in ("d", "h"):
        return timezone.now() + timedelta(seconds=_duration(read, text, path))
    parsed = parse_datetime(text)
    if parsed is None and (day := parse_date(text)) is not None:
        parsed = datetime(day.year, day.month, day.day)
    if parsed is None:
        raise read.fail(path, "a date (2027-01-31), a time (2027-01-31T12:00), or a lifetime (30d)")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)


def _rule_key(rule: ApprovalRule) -> str:
    return f"{rule.action} {rule.describe()}" + (f" in {rule.folder}" if rule.folder else "")


def _policy_key(policy: ApprovalPolicy) -> str:
    return f"{policy.name}: {describe_policy(policy)}"


def describe_policy(policy: ApprovalPolicy) -> str:
    fields = {
        "host": policy.host,
        "tool": policy.tool_pattern,
        "command_prefix": policy.command_prefix,
        "path": policy.path,
        "folder": policy.folder,
    }
    matches = [f"{k}={v}" for k, v in fields.items() if v]
    if policy.destructive is not None:
        matches.append(f"destructive={'yes' if policy.destructive else 'no'}")
    who = f"quorum {policy.quorum}" + ("" if policy.self_approval else ", not the asker's owner")
    if policy.deciders:
        who += f", by {', '.join(policy.deciders)}"
    if policy.timeout_seconds:
        who += f", after {policy.timeout_seconds:g} s: {policy.fallback}"
    return f"[{' '.join(matches) or 'every approval'}] {who}"


def describe_schedule(schedule: OnCallSchedule, people: list[Any]) -> str:
    names = ", ".join(person.get_username() for person in people) or "nobody"
    every = "weekly" if schedule.rotation_days == 7 else f"every {schedule.rotation_days} days"
    return (
        f"on-call:{schedule.name}: {names}, {every} from {schedule.starts_on:%a %Y-%m-%d} "
        f"{schedule.handoff:%H:%M} {schedule.time_zone}"
    )


def apply(found: PolicyFile, *, by: Any = None) -> list[str]:
    """Replace the project's rules and policies with the file's; returns what changed, one line each.

    Its on-call schedules replace those of the same name (keeping their overrides, which are made for a day in
    the admin) and those an earlier file made; a schedule made in the admin under another name stays.
    """
    before_rules = {_rule_key(r) for r in ApprovalRule.objects.filter(project=found.project)}
    before_policies = {_policy_key(p) for p in ApprovalPolicy.objects.filter(project=found.project)}
    before_schedules = {
        describe_schedule(schedule, schedule.rota())
        for schedule in OnCallSchedule.objects.filter(project=found.project)
    }
    # One transaction: every worker sees the old set or the new one, never a project with half its rules.
    with transaction.atomic():
        # One by one, through the models: each removal is in the audit record too.
        for old in [*ApprovalRule.objects.filter(project=found.project),
                    *ApprovalPolicy.objects.filter(project=found.project)]:  # fmt: skip
            old.delete()
        names = {schedule.name.lower() for schedule, _ in found.schedules}
        kept = OnCallSchedule.objects.filter(project=found.project).exclude(source__in=["", "admin"])
        for stale in kept:
            if stale.name.lower() not in names:
                stale.delete()
        for schedule, people in found.schedules:
            stored = OnCallSchedule.objects.filter(project=found.project, name__iexact=schedule.name).first()
            if stored is not None:
                schedule.pk = stored.pk
            schedule.source = found.source[:300]
            schedule.save()
            OnCallTurn.objects.filter(schedule=schedule).delete()
            OnCallTurn.objects.bulk_create(
                OnCallTurn(schedule=schedule, user=person, position=i) for i, person in enumerate(people)
            )
        for rule in found.rules:
            rule.source = found.source[:300]
            rule.owner = rule.owner or by
            rule.save()
        for policy in found.approvals:
            policy.source = found.source[:300]
            policy.save()
        after_rules = [_rule_key(r) for r in found.rules]
        after_policies = [_policy_key(p) for p in found.approvals]
        changes = [f"- rule {key}" for key in sorted(before_rules - set(after_rules))]
        changes += [f"+ rule {key}" for key in after_rules if key not in before_rules]
        changes += [f"- approval policy {key}" for key in sorted(before_policies - set(after_policies))]
        changes += [f"+ approval policy {key}" for key in after_policies if key not in before_policies]
        after_schedules = {
            describe_schedule(schedule, schedule.rota())
            for schedule in OnCallSchedule.objects.filter(project=found.project)
        }
        changes += [f"- {key}" for key in sorted(before_schedules - after_schedules)]
        changes += [f"+ {key}" for key in sorted(after_schedules - before_schedules)]
        applied = {"source": found.source[:300], "changes": changes[:500], "rules": len(after_rules),
                   "approval_policies": len(after_policies)}  # fmt: skip
        chain.record("policy.applied", acting.by(by), project=found.project, target=f"policy file {found.source}",
                     details=applied)  # fmt: skip
    return changes


def export(project: Project) -> str:
    """The project's rules and policies as a policy file (what `apply` reads back to the same)."""
    out: dict[str, Any] = {"project": project.name, "rules": [], "approvals": []}
    for rule in ApprovalRule.objects.filter(project=project, enabled=True).select_related("owner"):
        body: dict[str, Any] = {"tool": rule.tool_pattern}
        for key, value in (("command", rule.command), ("command_prefix", rule.command_prefix), ("path", rule.path),
                           ("pattern", rule.input_pattern), ("folder", rule.folder), ("message", rule.message),
                           ("reason", rule.reason)):  # fmt: skip
            if value:
                body[key] = value
        if rule.expires_at:
            body["expires"] = timezone.localtime(rule.expires_at).isoformat(timespec="seconds")
        if rule.owner:
            body["owner"] = rule.owner.get_username()
        out["rules"].append({rule.action: body})
    for policy in ApprovalPolicy.objects.filter(project=project).select_related("token"):
        match: dict[str, Any] = {}
        for key, value in (("host", policy.host), ("tool", policy.tool_pattern),
                           ("command_prefix", policy.command_prefix), ("path", policy.path),
                           ("folder", policy.folder)):  # fmt: skip
            if value:
                match[key] = value
        if policy.destructive is not None:
            match["destructive"] = policy.destructive
        if policy.token:
            match["token"] = policy.token.name
        entry: dict[str, Any] = {"name": policy.name, "match": match, "quorum": policy.quorum}
        entry["self_approval"] = policy.self_approval
        if policy.deciders:
            entry["deciders"] = list(policy.deciders)
        if policy.escalate:
            entry["escalate"] = [{"after": f"{s['after']:g}s", "notify": s["notify"]} for s in policy.escalate]
        if policy.timeout_seconds:
            entry["timeout"] = f"{policy.timeout_seconds:g}s"
        entry["fallback"] = policy.fallback
        out["approvals"].append(entry)
    schedules = OnCallSchedule.objects.filter(project=project)
    if schedules:
        out["schedules"] = [
            {
                "name": schedule.name,
                "people": [person.get_username() for person in schedule.rota()],
                "handoff": f"{schedule.handoff:%H:%M}",
                "time_zone": schedule.time_zone,
                "every": f"{schedule.rotation_days}d",
                "starts": schedule.starts_on.isoformat(),
            }
            for schedule in schedules
        ]
    return yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=120)


@dataclass(frozen=True)
class Difference:
    question: Question
    today: str
    with_file: str

    def __str__(self) -> str:
        when = timezone.localtime(self.question.created_at).strftime("%Y-%m-%d %H:%M")
        said = f"{when} {self.question.asker_name}: {self.question.short_title}"
        return f"{said}\n  today: {self.today}\n  file:  {self.with_file}"


def replay(found: PolicyFile, last: int = 500) -> tuple[int, list[Difference]]:
    """The project's last `last` decided approvals against the file: how many were read, and each that differs."""
    compiled = [CompiledRule(rule) for rule in found.rules]
    for rule, fresh in zip(found.rules, compiled, strict=True):
        fresh.label = f"rule {rule.describe()}"
    policy_list = [policies.CompiledPolicy.of(p) for p in found.approvals]
    past = (
        Question.objects.filter(project=found.project, kind=Kind.APPROVAL)
        .exclude(status=Status.PENDING)
        .select_related("answer", "asker")
        .order_by("-created_at")[:last]
    )
    differences: list[Difference] = []
    read = 0
    for question in past:
        read += 1
        payload = question.payload
        tool, tool_input, cwd = (
            str(payload.get("tool_name") or ""),
            payload.get("tool_input"),
            str(payload.get("cwd") or ""),
        )
        answer = getattr(question, "answer", None) if question.status == Status.ANSWERED else None
        behavior = str(answer.data.get("behavior")) if answer else "none"
        by = answer.answered_by if answer else question.outcome_words
        people = len([n for n in by.split(", ") if n]) if answer and answer.source != "rule" else 0
        today = f"{behavior}ed by {by}" if answer else f"no decision ({by})"
        ruling = rules.decide(tool, tool_input, cwd, compiled, found.project.pk)
        if ruling is not None:
            if ruling.action != behavior or (answer is not None and answer.source != "rule"):
                differences.append(Difference(question, today, f"{ruling.action} by {ruling.label}"))
            continue
        use = policies.ToolUse(
            found.project.pk, str(payload.get("host") or ""), tool, tool_input, cwd, question.asker_id
        )
        policy = policies.first_match(use, policy_list)
        if answer is not None and answer.source == "rule":
            needs = f" under {policy.name}" if policy else ""
            differences.append(Difference(question, today, f"no rule decides it: a person decides{needs}"))
        elif policy is not None and behavior == "allow" and people < int(policy.requirement["quorum"]):
            differences.append(
                Difference(question, today, f"{policy.name} needs {policy.requirement['quorum']} people to allow it")
            )
    return read, differences
