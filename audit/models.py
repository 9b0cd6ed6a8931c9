"""The record nobody can rewrite: one append-only table of entries, each chained to the one before by its hash.

An entry is written in the same transaction as the change it records (audit.chain.record), from the models'
write methods, so every path that changes something (the admin, the API, the commands, every channel) leaves
one. Nothing updates or deletes an entry: the admin has no such permission, the database refuses it (a trigger
on PostgreSQL and on SQLite, audit/migrations/0002), and `manage.py audit verify` finds whatever got past.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class ImmutableEntry(Exception):
    """An audit entry or checkpoint was about to be changed or deleted: only the purge drops them."""


class AppendOnly(models.Model):
    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableEntry(f"{self._meta.verbose_name} {self.pk} is part of the audit record: it never changes")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise ImmutableEntry(f"{self._meta.verbose_name} {self.pk} is part of the audit record: it is never deleted")


class Entry(AppendOnly):
    # Gapless from 1 (or from the checkpoint a purge left): the chain's order.
    seq = models.PositiveBigIntegerField(unique=True)
    at = models.DateTimeField("when")
    actor_kind = models.CharField(max_length=16)  # person, token, system
    actor = models.CharField(max_length=200)  # as people read it: "alice", "token agent-a (of alice)"
    actor_id = models.CharField(max_length=64, blank=True)  # the person's or token's id, kept after a delete
    action = models.CharField(max_length=64, db_index=True)  # dotted: question.answered, token.revoked
    project_id = models.BigIntegerField(null=True, blank=True, db_index=True)  # no key: entries outlive projects
    project = models.CharField(max_length=100, blank=True)
    target = models.CharField(max_length=300, blank=True)  # what it is about: "question 3f2a…", "token agent-a"
    target_id = models.CharField(max_length=64, blank=True, db_index=True)
    details = models.JSONField(default=dict, blank=True)
    ip = models.CharField(max_length=64, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    trace_id = models.CharField(max_length=32, blank=True)
    prev = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["-seq"]
        verbose_name_plural = "entries"

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} by {self.actor}"


class Checkpoint(AppendOnly):
    """The chain's head at a moment, signed with the server's Ed25519 key: an outsider holding the public key
    checks an export against it, and a purge may only cut the chain behind one."""

    seq = models.PositiveBigIntegerField(unique=True)
    hash = models.CharField(max_length=64)
    at = models.DateTimeField()
    key_id = models.CharField(max_length=16)  # the public key's fingerprint (audit.signing.key_id)
    signature = models.CharField(max_length=128)  # base64 of the Ed25519 signature over audit.signing.statement

    class Meta:
        ordering = ["-seq"]

    def __str__(self) -> str:
        return f"checkpoint at #{self.seq}"


class Head(models.Model):
    """The chain's last seq and hash, one row: its lock orders concurrent writers on every worker, and a chain
    whose tail was cut no longer reaches it (verify says so)."""

    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, blank=True)
    # Where the stored chain starts: 1, or past what the purge dropped behind a checkpoint.
    first_seq = models.PositiveBigIntegerField(default=1)

    def __str__(self) -> str:
        return f"head at #{self.seq}"


class Verification(models.Model):
    """Each run of `audit verify` over the database: what the admin shows ("verified through seq N at TIME")."""

    at = models.DateTimeField(auto_now_add=True)
    ok = models.BooleanField()
    through_seq = models.PositiveBigIntegerField(default=0)
    entries = models.PositiveBigIntegerField(default=0)
    problem = models.TextField(blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{'verified' if self.ok else 'failed'} through #{self.through_seq}"
