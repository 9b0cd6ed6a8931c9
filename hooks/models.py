"""Hook runs: every time an agent ran one of the team's checks, where, and what came of it.

Changes are announced with hooks.signals on commit; hooks.live pushes them to pages."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from core.signals import send_on_commit
from hooks import signals
from projects.models import InProject, InProjectQuerySet, Project
from tokens.models import AgentToken

# A running run's heartbeat moves at least once per command, and a command never
# outlasts its timeout; a run silent for longer than that (plus this) lost its server.
STALE_GRACE = timedelta(seconds=60)


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    TIMED_OUT = "timed-out", "Timed out"
    NOTHING_TO_RUN = "nothing-to-run", "Nothing to run"
    CANCELLED = "cancelled", "Cancelled"
    ABANDONED = "abandoned", "Abandoned (server stopped)"


class DirectoryStatus(models.TextChoices):
    WAITING = "waiting", "Waiting"
    RUNNING = "running", "Running"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    TIMED_OUT = "timed-out", "Timed out"
    SKIPPED = "skipped", "Not run (failFast)"
    CANCELLED = "cancelled", "Cancelled"


class Busy(Exception):
    """The hook already runs in that directory as often as it may."""

    def __init__(self, run: HookRun | None, tool: str, target: str, limit: int) -> None:
        self.run = run
        since = ""
        if run is not None:
            seconds = int((timezone.now() - run.started_at).total_seconds())
            since = f" (started {seconds} s ago by {run.caller_name})"
        super().__init__(
            f"{tool} is already running in {target!r}{since}; Hook Bridge runs it there "
            f"{'once at a time' if limit == 1 else f'at most {limit} times at once'}. "
            "Wait for that run to finish and call again; its result is on the dashboard."
        )


class AtCapacity(Exception):
    """As many hooks run as the server, or this caller's token, may run at once."""

    def __init__(self, running: int, limit: int, setting: str, whose: str) -> None:
        self.running, self.limit = running, limit
        super().__init__(
            f"{whose} {running} hook runs going, the most Hook Bridge allows at once ({setting}={limit}). "
            "Nothing was started: wait for one to finish and call again."
        )


class HookRun(InProject):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tool = models.CharField(max_length=128, db_index=True)
    plugin = models.CharField(max_length=64)
    hook = models.CharField(max_length=64)
    title = models.CharField(max_length=200)
    command = models.TextField(help_text="The command as configured when the run started.")
    target = models.CharField(max_length=1024, help_text="The folder asked for, relative to the workspace.")
    fail_fast = models.BooleanField(default=True)
    verbose = models.BooleanField(default=False)
    timeout_seconds = models.FloatField()
    caller = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.SET_NULL)
    caller_name = models.CharField(max_length=100)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING, db_index=True)
    # Held while running: (tool, target, slot) is unique, so no more than maxConcurrent runs
    # share a folder, across every worker process.
    slot = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    heartbeat_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = InProjectQuerySet["HookRun"].as_manager()

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tool", "target", "slot"], condition=models.Q(slot__isnull=False), name="one_run_per_slot"
            )
        ]

    def __str__(self) -> str:
        return f"{self.tool} in {self.target}"

    def get_absolute_url(self) -> str:
        return f"/hooks/runs/{self.pk}/"

    # How many runs the dashboard lists; older ones are in the admin.
    RECENT = 10

    @classmethod
    def recent(cls, projects: Collection[int] | None = None) -> list[HookRun]:
        """The runs the dashboard lists, newest first; `projects`: only theirs (None: every project's)."""
        mine = cls.objects.all() if projects is None else cls.objects.filter(project_id__in=list(projects))
        return list(mine.prefetch_related("directories")[: cls.RECENT])

    @property
    def duration(self) -> float | None:
        end = self.finished_at or (None if self.status == RunStatus.RUNNING else self.heartbeat_at)
        return (end - self.started_at).total_seconds() if end else None

    def is_stale(self) -> bool:
        limit = timedelta(seconds=self.timeout_seconds) + STALE_GRACE
        return self.status == RunStatus.RUNNING and timezone.now() - self.heartbeat_at > limit

    @property
    def failed_count(self) -> int:
        return sum(1 for d in self.directories.all() if d.status in (DirectoryStatus.FAILED, DirectoryStatus.TIMED_OUT))

    @classmethod
    def start(
        cls,
        *,
        tool: str,
        plugin: str,
        hook: str,
        title: str,
        command: str,
        target: str,
        max_concurrent: int,
        timeout_seconds: float,
        caller: AgentToken | None,
        caller_name: str,
        fail_fast: bool,
        verbose: bool,
    ) -> HookRun:
        """Claim a free slot for (tool, target) and record the run; raises Busy when none is free."""
        fields: dict[str, Any] = {
            "tool": tool, "plugin": plugin, "hook": hook, "title": title, "command": command, "target": target,
            "timeout_seconds": timeout_seconds, "caller": caller, "caller_name": caller_name, "fail_fast": fail_fast,
            "verbose": verbose, "project_id": Project.for_agent(caller.project_id if caller else None),
        }  # fmt: skip
        holder = None
        for slot in range(max_concurrent):
            for _attempt in range(2):  # a second go once a stale holder is cleared
                try:
                    # Atomic: the insert either takes the slot or fails on the unique constraint.
                    with transaction.atomic():
                        run = cls.objects.create(slot=slot, **fields)
                except IntegrityError:
                    holder = cls.objects.filter(tool=tool, target=target, slot=slot).first()
                    if holder is None or not holder.is_stale():
                        break
                    holder.abandon()
                    continue
                # Committed first, then counted: of two runs started at once on two workers the
                # later to count sees the other, so the caps are never exceeded (at worst both step back).
                try:
                    run.check_capacity()
                except AtCapacity:
                    run.delete()
                    raise
                send_on_commit(signals.run_started, HookRun, run_id=run.pk)
                return run
        raise Busy(holder, tool, target, max_concurrent)

    def check_capacity(self) -> None:
        """Raise AtCapacity if the other runs going already fill the server's or this token's cap."""
        others = (
            HookRun.objects.filter(status=RunStatus.RUNNING)
            .exclude(pk=self.pk)
            .only("heartbeat_at", "timeout_seconds", "status", "caller_id")
        )
        going = [run for run in others if not run.is_stale()]
        limit = settings.HOOKBRIDGE_HOOK_MAX_RUNS
        if len(going) >= limit:
            raise AtCapacity(len(going), limit, "HOOKBRIDGE_HOOK_MAX_RUNS", "The server has")
        if self.caller_id is not None:
            mine = sum(1 for run in going if run.caller_id == self.caller_id)
            limit = settings.HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN
            if mine >= limit:
                raise AtCapacity(mine, limit, "HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN", f"Token '{self.caller_name}' has")

    def abandon(self) -> None:
        """A run whose server died mid-run: free its slot so the hook can run there again."""
        with transaction.atomic():
            updated = HookRun.objects.filter(pk=self.pk, status=RunStatus.RUNNING).update(
                status=RunStatus.ABANDONED, slot=None, finished_at=self.heartbeat_at
            )
            if updated:
                self.directories.filter(status__in=[DirectoryStatus.WAITING, DirectoryStatus.RUNNING]).update(
                    status=DirectoryStatus.CANCELLED
                )
                send_on_commit(signals.run_changed, HookRun, run_id=self.pk)

    def plan(self, directories: list[str]) -> list[HookRunDirectory]:
        """Record the folders the run will go through, in order."""
        with transaction.atomic():
            planned = HookRunDirectory.objects.bulk_create(
                HookRunDirectory(run=self, position=i, directory=d) for i, d in enumerate(directories)
            )
            HookRun.objects.filter(pk=self.pk).update(heartbeat_at=timezone.now())
            send_on_commit(signals.run_changed, HookRun, run_id=self.pk)
        return planned

    def beat(self) -> None:
        HookRun.objects.filter(pk=self.pk).update(heartbeat_at=timezone.now())

    def directory_started(self, step: HookRunDirectory) -> None:
        with transaction.atomic():
            now = timezone.now()
            HookRunDirectory.objects.filter(pk=step.pk).update(status=DirectoryStatus.RUNNING, started_at=now)
            HookRun.objects.filter(pk=self.pk).update(heartbeat_at=now)
            send_on_commit(signals.run_changed, HookRun, run_id=self.pk)

    def directory_finished(self, step: HookRunDirectory, **result: Any) -> None:
        """Store one folder's exit code, duration and output."""
        with transaction.atomic():
            HookRunDirectory.objects.filter(pk=step.pk).update(**result)
            HookRun.objects.filter(pk=self.pk).update(heartbeat_at=timezone.now())
            send_on_commit(signals.run_changed, HookRun, run_id=self.pk)
        for name, value in result.items():
            setattr(step, name, value)

    def finish(self, status: RunStatus) -> None:
        """Close the run and free its slot; folders never reached are marked skipped or cancelled."""
        left = DirectoryStatus.CANCELLED if status == RunStatus.CANCELLED else DirectoryStatus.SKIPPED
        # Atomic: the slot is freed in the same commit that records the outcome.
        with transaction.atomic():
            now = timezone.now()
            self.directories.filter(status=DirectoryStatus.RUNNING).update(status=DirectoryStatus.CANCELLED)
            self.directories.filter(status=DirectoryStatus.WAITING).update(status=left)
            HookRun.objects.filter(pk=self.pk).update(status=status, slot=None, finished_at=now, heartbeat_at=now)
            send_on_commit(signals.run_changed, HookRun, run_id=self.pk)
        self.status, self.slot, self.finished_at = status, None, now


class HookRunDirectory(models.Model):
    """One folder of a run: the command ran there (or was skipped), with its exit code and output."""

    run = models.ForeignKey(HookRun, on_delete=models.CASCADE, related_name="directories")
    position = models.PositiveIntegerField()
    directory = models.CharField(max_length=1024, help_text="Relative to the workspace.")
    status = models.CharField(max_length=16, choices=DirectoryStatus.choices, default=DirectoryStatus.WAITING)
    exit_code = models.IntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    output = models.TextField(blank=True)
    output_bytes = models.PositiveBigIntegerField(default=0, help_text="All the output the command wrote.")
    output_cut = models.PositiveBigIntegerField(default=0, help_text="Bytes cut from the middle to keep the limit.")

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="one_row_per_run_position")]

    def __str__(self) -> str:
        return self.directory

    @property
    def symbol(self) -> str:
        return {
            DirectoryStatus.PASSED: "✅",
            DirectoryStatus.FAILED: "❌",
            DirectoryStatus.TIMED_OUT: "⏱",
            DirectoryStatus.SKIPPED: "⏭",
            DirectoryStatus.CANCELLED: "✖",
        }.get(DirectoryStatus(self.status), "…")
