"""Who decides a tool use: rules that decide at once, and policies that say which people must.

A rule matches what a person reads (a tool; a whole command, a command's first words, a path), never a string
search: a shell command is read into the simple commands it would run (approvals.shell), and a rule allows it
only when each of them is allowed and none is denied. A policy names who must decide what no rule decides.
"""

from __future__ import annotations

import json
import posixpath
import re
from datetime import timedelta
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

from approvals import shell
from audit import chain
from audit.audited import Audited
from projects.models import Project, Role
from tokens.models import AgentToken


class Action(models.TextChoices):
    ALLOW = "allow", "Allow"
    DENY = "deny", "Deny"


class Fallback(models.TextChoices):
    DENY = "deny", "Deny"
    ALLOW = "allow", "Allow"
    HOST = "host", "Let the host's own prompt ask"


def _compiles(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValidationError(f"not a regular expression: {exc}") from None


def _one_command(text: str) -> None:
    if text and shell.words_of(text) is None:
        raise ValidationError("must be one plain command (words, no &&, |, ;, $(…) or redirection)")


def _commands(text: str) -> None:
    if not text:
        return
    parsed = shell.parse(text)
    if not parsed.readable or not all(all(c.literal) and not c.open_ended for c in parsed.commands):
        raise ValidationError("must be plain commands: " + "; ".join(parsed.problems or ["words only"]))


def shell_command(tool_name: str, tool_input: Any) -> str | None:
    """A Bash tool use's command as typed; None for any other tool use."""
    if tool_name == "Bash" and isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        return str(tool_input["command"])
    return None


def input_text(tool_name: str, tool_input: Any) -> str:
    """What a regular expression is searched in: a Bash command as typed, any other input as JSON."""
    command = shell_command(tool_name, tool_input)
    return command if command is not None else json.dumps(tool_input, ensure_ascii=False, sort_keys=True)


def input_path(tool_input: Any) -> str | None:
    """The file a tool use touches (Edit, Write, Read, …), or None."""
    if isinstance(tool_input, dict):
        for key in ("file_path", "path", "notebook_path"):
            if isinstance(tool_input.get(key), str):
                return str(tool_input[key])
    return None


def default_expiry() -> Any:
    return timezone.now() + timedelta(days=settings.HOOKBRIDGE_RULE_DAYS)


class ApprovalRule(Audited):
    """A tool, and a command, a command prefix, a path or a pattern (+ project, + folder) -> allow or deny."""

    audit_noun = "rule"

    position = models.PositiveIntegerField(default=100, help_text="Shown in this order, lowest first.")
    tool_pattern = models.CharField(
        "tool",
        max_length=200,
        validators=[_compiles],
        help_text="The tool's name (Bash, Edit); a regular expression the whole name must match: Edit|Write, mcp__.*",
    )
    command = models.CharField(
        max_length=2000,
        blank=True,
        validators=[_commands],
        help_text="Bash: exactly these commands (every command of `a && b` must be one of them).",
    )
    command_prefix = models.CharField(
        max_length=500,
        blank=True,
        validators=[_one_command],
        help_text="Bash: a command starting with these words (`git status` matches `git status -s`, "
        "not `git statusx`). Each command of a compound one is matched on its own.",
    )
    path = models.CharField(
        max_length=500,
        blank=True,
        help_text="A file tool's path, as a pattern (src/**, *.md), inside the agent's folder unless it starts with /.",
    )
    input_pattern = models.CharField(
        max_length=500,
        blank=True,
        validators=[_compiles],
        help_text="For deny rules (and admins who ask for one): a regular expression searched for in the input "
        "(a Bash command as typed, and each command it runs; other input as JSON).",
    )
    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Only for this project's agents; empty: every project's (a superuser's rule).",
    )
    folder = models.CharField(
        max_length=500,
        blank=True,
        help_text="Only for agents working in this folder (or below it); empty: any folder.",
    )
    action = models.CharField(max_length=8, choices=Action.choices)
    message = models.CharField(
        max_length=1000, blank=True, help_text="For a deny: what the agent is told (why, and what to do instead)."
    )
    enabled = models.BooleanField(default=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who made it (and answers for it).",
    )
    reason = models.CharField(max_length=500, blank=True, help_text="Why the team has it.")
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="After this it decides nothing (a rule made from an approval: 30 days)."
    )
    # Where it came from: "admin", "approval", or the policy file that applied it.
    source = models.CharField(max_length=300, blank=True, default="admin")
    # The digest of what the person saw when they made it from an approval (questions.models.Question.digest).
    made_from = models.CharField(max_length=64, blank=True)
    decided_count = models.PositiveIntegerField(default=0, editable=False)
    last_decided_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_action_display().lower()} {self.describe()}"

    def describe(self) -> str:
        """What it matches, in words."""
        if self.command:
            return f"{self.tool_pattern} `{self.command}`"
        if self.command_prefix:
            return f"{self.tool_pattern} `{self.command_prefix} …`"
        if self.path:
            return f"{self.tool_pattern} {self.path}"
        if self.input_pattern:
            return f"{self.tool_pattern} /{self.input_pattern}/"
        return f"{self.tool_pattern} (any input)"

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    def clean(self) -> None:
        if self.action == Action.DENY and not self.message.strip():
            raise ValidationError(
                {"message": "A deny rule needs a message: the agent reads it to know what to do instead."}
            )
        given = [name for name in ("command", "command_prefix", "path", "input_pattern") if getattr(self, name)]
        if len(given) > 1:
            raise ValidationError(f"A rule matches one thing: {', '.join(given)} are all set; keep one.")

    @classmethod
    def count_decisions(cls, pks: list[int]) -> None:
        """The rules that made a decision: how many times they decided, and when last."""
        if pks:
            cls.objects.filter(pk__in=pks).update(decided_count=F("decided_count") + 1, last_decided_at=timezone.now())


class CompiledRule:
    """A rule ready to match in microseconds: patterns compiled once per process (see approvals.rules)."""

    __slots__ = (
        "action",
        "command",
        "expires_at",
        "folder",
        "input",
        "label",
        "message",
        "path",
        "pk",
        "prefix",
        "project_id",
        "project_name",
        "tool",
    )

    def __init__(self, rule: ApprovalRule) -> None:
        self.pk = rule.pk
        self.tool = re.compile(rule.tool_pattern)
        self.input = re.compile(rule.input_pattern) if rule.input_pattern else None
        self.command = frozenset(c.words for c in shell.parse(rule.command).commands) if rule.command else None
        self.prefix = shell.words_of(rule.command_prefix) if rule.command_prefix else None
        self.path = rule.path or None
        self.folder = rule.folder.rstrip("/")
        # Its project, and the project's name: an agent whose token works in every project is in the project its
        # folder is named for (projects.models.Project.for_agent), and the rule matches without a query.
        self.project_id = rule.project_id
        self.project_name = rule.project.name.lower() if rule.project_id is not None and rule.project else ""
        self.action = rule.action
        self.message = rule.message
        self.expires_at = rule.expires_at
        self.label = f"rule {rule}"

    def applies(self, tool_name: str, cwd: str, project_id: int | None) -> bool:
        """Whether the rule speaks of this tool, here, now (before what the input is)."""
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return False
        if self.project_id is not None:
            if project_id is not None and project_id != self.project_id:
                return False
            if project_id is None and PurePosixPath(cwd).name.lower() != self.project_name:
                return False
        if self.folder and not (cwd == self.folder or PurePosixPath(cwd).is_relative_to(self.folder)):
            return False
        return bool(self.tool.fullmatch(tool_name))

    def matches_command(self, command: shell.Command) -> bool:
        """Whether it speaks of this one simple command."""
        if self.command is not None:
            return any(command.is_exactly(words) for words in self.command)
        if self.prefix is not None:
            return command.starts_with(self.prefix)
        if self.input is not None:
            return self.input.search(command.text) is not None or self.input.search(str(command)) is not None
        return self.path is None

    def matches_input(self, tool_name: str, tool_input: Any, cwd: str) -> bool:
        """Whether it speaks of a tool use that is not a shell command (or of a command's whole text)."""
        if self.command is not None or self.prefix is not None:
            return False
        if self.path is not None:
            path = input_path(tool_input)
            return path is not None and path_matches(self.path, path, cwd)
        return self.input is None or self.input.search(input_text(tool_name, tool_input)) is not None


def path_matches(pattern: str, path: str, cwd: str) -> bool:
    """`src/**` inside the agent's folder (never out of it via ..), `/etc/*` anywhere; `**` crosses folders."""
    target = posixpath.normpath(posixpath.join(cwd or "/", path))
    if not pattern.startswith("/"):
        base = posixpath.normpath(cwd) if cwd else ""
        if not base or not target.startswith(base.rstrip("/") + "/"):
            return False
        target = target[len(base.rstrip("/")) + 1 :]
    regex = re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    return re.fullmatch(regex.replace(r"\?", "[^/]"), target) is not None


class ApprovalPolicy(Audited):
    """Who must decide a project's approvals that match, what happens over time, and what nobody deciding means."""

    audit_noun = "policy"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="approval_policies")
    position = models.PositiveIntegerField(default=100, help_text="Tried in this order; the first match applies.")
    name = models.CharField(max_length=200)
    # What it matches; an empty field matches anything.
    host = models.CharField(max_length=40, blank=True, help_text="claude-code, codex, gemini, copilot, opencode, …")
    tool_pattern = models.CharField("tool", max_length=200, blank=True, validators=[_compiles])
    command_prefix = models.CharField(max_length=500, blank=True, validators=[_one_command])
    path = models.CharField(max_length=500, blank=True)
    destructive = models.BooleanField(
        null=True, blank=True, help_text="Only commands on the destructive list (yes), only others (no), or either."
    )
    token = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    folder = models.CharField(max_length=500, blank=True)
    # Who decides.
    quorum = models.PositiveSmallIntegerField(default=1, help_text="How many distinct people must allow.")
    self_approval = models.BooleanField(
        default=True, help_text="Whether the person whose agent asks may count toward the quorum."
    )
    deciders = models.JSONField(
        default=list,
        blank=True,
        help_text='Who may decide: ["role:admin", "ann", "on-call:backend"]; empty: its answerers and admins.',
    )
    escalate = models.JSONField(default=list, blank=True, help_text='Steps over time: [{"after": 300, "notify": …}]')
    timeout_seconds = models.FloatField(null=True, blank=True, help_text="Nobody decided by then: the fallback.")
    fallback = models.CharField(max_length=8, choices=Fallback.choices, default=Fallback.DENY)
    source = models.CharField(max_length=300, blank=True, default="admin", help_text="Where it came from.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project", "position", "id"]
        verbose_name_plural = "approval policies"

    def __str__(self) -> str:
        return f"{self.project}: {self.name}"

    def clean(self) -> None:
        for decider in self.deciders or []:
            if not isinstance(decider, str) or not decider.strip():
                raise ValidationError({"deciders": "each decider is a username, role:<role> or on-call:<schedule>"})
            if decider.startswith("role:") and decider[5:] not in Role.values:
                raise ValidationError({"deciders": f"{decider}: roles are {', '.join(Role.values)}"})
        if self.quorum < 1:
            raise ValidationError({"quorum": "at least 1"})


class Grant(Audited):
    """A person's "Allow for this session, N minutes": the same tool and command prefix, in that one session, is
    allowed at once until it expires or is revoked (approvals.grants)."""

    audit_noun = "grant"

    session = models.ForeignKey("lifecycle.AgentSession", on_delete=models.CASCADE, related_name="grants")
    tool_name = models.CharField(max_length=200)
    command_prefix = models.CharField(max_length=500, blank=True, help_text="Bash: the command's first words.")
    path = models.CharField(max_length=500, blank=True, help_text="A file tool: this file.")
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The approval it came from, and the digest of what its person saw there.
    question = models.ForeignKey(
        "questions.Question", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    made_from = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["session", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.tool_name} {self.describe()} in session {self.session_id} until {self.expires_at:%H:%M}"

    def describe(self) -> str:
        if self.command_prefix:
            return f"`{self.command_prefix} …`"
        return self.path or "(any input)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()

    @property
    def minutes_left(self) -> int:
        return max(0, int((self.expires_at - timezone.now()).total_seconds() // 60))

    def compiled(self) -> CompiledRule:
        """As an allow rule over this session's tool uses (a deny rule still wins)."""
        rule = ApprovalRule(
            pk=-self.pk,
            tool_pattern=re.escape(self.tool_name),
            command_prefix=self.command_prefix,
            path=self.path,
            action=Action.ALLOW,
            expires_at=self.expires_at,
        )
        found = CompiledRule(rule)
        by = self.granted_by.get_username() if self.granted_by else "someone"
        found.label = f"{by}'s grant for this session until {timezone.localtime(self.expires_at):%H:%M}"
        return found

    def revoke(self, by: str) -> bool:
        """Ends it now; False when it had ended already."""
        # Atomic: the grant ends and the record says so, together.
        with transaction.atomic():
            done = Grant.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
                revoked_at=timezone.now(), revoked_by=by
            )
            if done:
                chain.record("grant.revoked", project=self._audit_project(), target=self.audit_target(),
                             target_id=self.pk, details={"revoked_by": by})  # fmt: skip
        self.refresh_from_db()
        return bool(done)

    def _audit_project(self) -> Any:
        return self.session.project
