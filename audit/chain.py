"""Writing the record and proving it: each entry's hash covers its canonical JSON and the hash before it.

`record` is called by the models' write methods inside their own transaction, so an entry exists exactly when
its change does. `verify` walks any sequence of entries and checkpoints (the database's, or an export's) and
names the first that fails.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from audit import append_only, signing
from audit.models import Checkpoint, Entry, Head, Verification
from core import acting
from core.acting import Actor

# What each entry's hash covers, in the canonical JSON (sorted keys, no spaces, UTF-8).
HASHED = (
    "seq", "at", "actor_kind", "actor", "actor_id", "action", "project_id", "project", "target", "target_id",
    "details", "ip", "user_agent", "request_id", "trace_id", "prev",
)  # fmt: skip


def iso(at: datetime.datetime) -> str:
    return at.astimezone(datetime.UTC).isoformat(timespec="microseconds")


def canonical(values: dict[str, Any]) -> bytes:
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def entry_hash(values: dict[str, Any]) -> str:
    return hashlib.sha256(canonical({name: values[name] for name in HASHED})).hexdigest()


def as_dict(entry: Entry) -> dict[str, Any]:
    """An entry as it is hashed and exported."""
    values = {name: getattr(entry, name) for name in HASHED}
    values["at"] = iso(entry.at)
    values["hash"] = entry.hash
    return values


def _head() -> Head:
    # Locked: two workers recording at once take turns, so seq stays gapless and each prev is the one before.
    head = Head.objects.select_for_update().filter(pk=1).first()
    if head is None:
        head, _ = Head.objects.get_or_create(pk=1)
    return head


def record(
    action: str,
    actor: Actor | None = None,
    *,
    project: Any = None,
    target: str = "",
    target_id: Any = "",
    details: dict[str, Any] | None = None,
    ip: str | None = None,
) -> Entry:
    """Append one entry for `action`, by `actor` (default: whoever acts now); in the caller's transaction (or its
    own), so it lands with the change."""
    actor = actor or acting.actor()
    origin = acting.origin()
    # Through JSON and back: what is stored, hashed and exported is exactly the same value.
    plain = json.loads(json.dumps(details or {}, default=str))
    with transaction.atomic():
        head = _head()
        at = timezone.now()
        values: dict[str, Any] = {
            "seq": head.seq + 1,
            "at": iso(at),
            "actor_kind": actor.kind,
            "actor": actor.name[:200],
            "actor_id": actor.id[:64],
            "action": action,
            "project_id": getattr(project, "pk", None),
            "project": str(getattr(project, "name", "") or "")[:100],
            "target": target[:300],
            "target_id": str(target_id or "")[:64],
            "details": plain,
            "ip": (origin.ip or ip or "")[:64],
            "user_agent": origin.user_agent,
            "request_id": origin.request_id,
            "trace_id": origin.trace_id,
            "prev": head.hash,
        }
        chained = entry_hash(values)
        entry = Entry.objects.create(**{**values, "at": at, "hash": chained})
        Head.objects.filter(pk=1).update(seq=entry.seq, hash=chained)
        every = settings.HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY
        last = Checkpoint.objects.order_by("-seq").values_list("at", flat=True).first()
        stale = last is None or at - last >= datetime.timedelta(minutes=settings.HOOKBRIDGE_AUDIT_CHECKPOINT_MINUTES)
        if (every and entry.seq % every == 0) or stale:
            _checkpoint(entry.seq, chained, at)
    return entry


def _checkpoint(seq: int, chained: str, at: datetime.datetime) -> Checkpoint:
    public = signing.public_key_text()
    return Checkpoint.objects.create(
        seq=seq, hash=chained, at=at, key_id=signing.key_id(public), signature=signing.sign(seq, chained, at)
    )


def checkpoint() -> Checkpoint | None:
    """A signed checkpoint at the chain's head now, unless one is there already; None for an empty chain."""
    with transaction.atomic():
        head = _head()
        if not head.seq:
            return None
        there = Checkpoint.objects.filter(seq=head.seq).first()
        return there or _checkpoint(head.seq, head.hash, timezone.now())


def sign_head_if_due() -> Checkpoint | None:
    """A checkpoint at the head when entries came since the last one and HOOKBRIDGE_AUDIT_CHECKPOINT_MINUTES passed:
    a quiet server's last entries are signed too, not only at the next entry (notify.audit_watch calls this)."""
    with transaction.atomic():
        head = _head()
        last = Checkpoint.objects.order_by("-seq").first()
        now = timezone.now()
        if not head.seq or (last is not None and last.seq >= head.seq):
            return None
        if last is not None and now - last.at < datetime.timedelta(
            minutes=settings.HOOKBRIDGE_AUDIT_CHECKPOINT_MINUTES
        ):
            return None
        return _checkpoint(head.seq, head.hash, now)


@dataclass
class Verified:
    ok: bool
    entries: int = 0
    through_seq: int = 0
    signed_through: int = 0
    problem: str = ""
    notes: list[str] = field(default_factory=list)


def verify(
    entries: Iterable[dict[str, Any]],
    checkpoints: Iterable[dict[str, Any]],
    public: str | list[str],
    *,
    first_seq: int = 1,
    head_seq: int | None = None,
    chained: bool = True,
    anchor: str | None = None,
) -> Verified:
    """Walk `entries` (ordered by seq, from `first_seq`) and `checkpoints`: the first thing wrong, or how many.

    `chained` False (one project's export, cut out of the chain) checks each entry's own hash only.
    """
    keys = {signing.key_id(key): key for key in ([public] if isinstance(public, str) else public) if key}
    result = Verified(ok=True)
    hashes: dict[int, str] = {}
    # The first entry's prev: "" at the chain's start; past a purge, the hash its signed checkpoint holds; in an
    # export from --since, as given.
    expected, prev = first_seq, "" if first_seq == 1 else anchor

    def fail(problem: str) -> Verified:
        result.ok, result.problem = False, problem
        return result

    for values in entries:
        seq = int(values["seq"])
        if chained and seq != expected:
            if seq > expected:
                return fail(f"seq {expected}: missing (the next entry is seq {seq})")
            return fail(f"seq {seq}: out of order or twice (seq {expected} was expected)")
        if chained and prev is not None and values["prev"] != prev:
            return fail(f"seq {seq}: its prev is not the hash of seq {seq - 1}")
        if entry_hash(values) != values["hash"]:
            return fail(f"seq {seq}: its hash does not match what it holds (changed after it was written)")
        prev = values["hash"]
        hashes[seq] = prev
        expected = seq + 1
        result.entries += 1
        result.through_seq = seq
    last = expected - 1
    if chained and head_seq is not None and head_seq != last:
        if head_seq > last:
            return fail(f"seq {last + 1}: missing: the chain ends at seq {last} but seq {head_seq} was written")
        return fail(f"seq {head_seq + 1}: the chain goes past the last entry written (seq {head_seq})")
    for point in sorted(checkpoints, key=lambda p: int(p["seq"])):
        seq, at = int(point["seq"]), datetime.datetime.fromisoformat(str(point["at"]))
        key = keys.get(str(point["key_id"]))
        if key is None or not signing.signed_by(key, point["signature"], seq, point["hash"], at):
            return fail(f"checkpoint at seq {seq}: not signed by this key ({', '.join(keys) or 'none given'})")
        if chained and seq > last:
            return fail(f"seq {last + 1}: missing: a checkpoint was signed at seq {seq}, past the last entry")
        if seq in hashes:
            if hashes[seq] != point["hash"]:
                return fail(f"seq {seq}: its hash is not the one its signed checkpoint holds")
            result.signed_through = max(result.signed_through, seq)
    return result


def stored_entries(batch: int = 2000) -> Iterator[dict[str, Any]]:
    last = 0
    while True:
        page = list(Entry.objects.filter(seq__gt=last).order_by("seq")[:batch])
        if not page:
            return
        for entry in page:
            yield as_dict(entry)
        last = page[-1].seq


def checkpoint_dict(point: Checkpoint) -> dict[str, Any]:
    return {
        "seq": point.seq, "hash": point.hash, "at": iso(point.at), "key_id": point.key_id, "signature": point.signature,
    }  # fmt: skip


def verify_stored() -> Verified:
    """The database's chain, from where it starts (1, or past a purge's checkpoint) to its head."""
    head = Head.objects.filter(pk=1).first()
    first_seq = head.first_seq if head is not None else 1
    anchor = None
    if first_seq > 1:
        behind = Checkpoint.objects.filter(seq=first_seq - 1).first()
        if behind is None:
            return Verified(ok=False, problem=f"seq {first_seq}: the chain starts here with no checkpoint behind it")
        anchor = behind.hash
    return verify(
        stored_entries(),
        [checkpoint_dict(p) for p in Checkpoint.objects.all()],
        signing.trusted_keys(),
        first_seq=first_seq,
        head_seq=head.seq if head is not None else 0,
        anchor=anchor,
    )


def verify_and_keep() -> Verified:
    """Verify the database's chain and keep the result (the admin's "verified through seq N at TIME")."""
    result = verify_stored()
    Verification.objects.create(
        ok=result.ok, through_seq=result.through_seq, entries=result.entries, problem=result.problem
    )
    return result


def purge_before(cutoff: datetime.datetime) -> tuple[int, int]:
    """Drop the entries behind the last signed checkpoint made before `cutoff`: (how many, through which seq).

    Only behind a checkpoint, so what stays still verifies: its first entry's prev is that checkpoint's hash, and
    the checkpoint's signature proves it. The purge is itself an entry. (0, 0) when no checkpoint is old enough.
    """
    with transaction.atomic():
        head = _head()
        point = Checkpoint.objects.filter(at__lt=cutoff, seq__gte=head.first_seq).order_by("-seq").first()
        if point is None:
            return 0, 0
        doomed = Entry.objects.filter(seq__lte=point.seq)
        count = doomed.count()
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                # The trigger lets a DELETE through only in a transaction that says it is the purge.
                cursor.execute("SET LOCAL hookbridge.audit_purge = 'on'")
            elif connection.vendor == "sqlite":
                cursor.execute("DROP TRIGGER IF EXISTS audit_entry_no_delete")
            cursor.execute("DELETE FROM audit_entry WHERE seq <= %s", [point.seq])
            if connection.vendor == "postgresql":
                cursor.execute("SET LOCAL hookbridge.audit_purge = 'off'")
            elif connection.vendor == "sqlite":
                cursor.execute(append_only.sqlite_triggers("audit_entry")[1])
        Head.objects.filter(pk=1).update(first_seq=point.seq + 1)
        record("audit.purged", details={"entries": count, "through_seq": point.seq, "checkpoint_at": iso(point.at),
                                        "older_than": iso(cutoff)})  # fmt: skip
    return count, point.seq
