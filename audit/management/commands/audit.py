"""The audit record from a terminal: verify the chain (the database's or an export's), export it, checkpoint it."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from audit import chain, signing
from audit.models import Checkpoint, Entry
from core import commands

EXPORT_TYPE = "hookbridge-audit-export"


class Command(commands.Command):
    help = "Verify the audit record's chain and signatures, export it as JSON Lines, or sign its head now."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        check = actions.add_parser("verify", help="walk the chain and its signed checkpoints; exit 1 at a fault")
        check.add_argument("--file", type=Path, help="an export (audit export) to verify alone, not the database")
        check.add_argument(
            "--public-key", help="the server's published public key (base64); default: the one the file names"
        )
        export = actions.add_parser("export", help="write the record as JSON Lines that verify alone")
        export.add_argument("--output", type=Path, required=True, help="the file to write ('-' for standard output)")
        export.add_argument("--since", help="from this seq, or from this time (ISO 8601)")
        export.add_argument("--project", help="only this project's entries (by name): the chain between them is cut")
        actions.add_parser("checkpoint", help="sign the chain's head now (an export does this first by itself)")
        actions.add_parser("key", help="the public key checkpoints are signed with, to publish")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "verify":
            self.verify(options["file"], options["public_key"])
        elif action == "export":
            self.export(options["output"], options["since"], options["project"])
        elif action == "checkpoint":
            point = chain.checkpoint()
            said = "The record is empty: nothing to sign." if point is None else f"Signed the head: seq {point.seq}."
            self.stdout.write(said)
        elif action == "key":
            public = signing.public_key_text()
            self.stdout.write(f"{public}  (key id {signing.key_id(public)})")

    def verify(self, file: Path | None, public: str | None) -> None:
        if file is None:
            result = chain.verify_and_keep()
            where = "the database"
        else:
            result, public = _verify_file(file, public)
            where = f"{file} (key id {signing.key_id(public)})"
        if not result.ok:
            raise CommandError(f"audit verify failed in {where}: {result.problem}")
        signed = f", signed through seq {result.signed_through}" if result.signed_through else ", none signed yet"
        for note in result.notes:
            self.stdout.write(note)
        self.stdout.write(f"Verified {result.entries} entries of {where} through seq {result.through_seq}{signed}.")

    def export(self, output: Path, since: str | None, project: str | None) -> None:
        # Signed at the head first, so every entry exported is covered by a checkpoint at or after it.
        chain.checkpoint()
        entries = Entry.objects.order_by("seq")
        if since:
            if since.isdigit():
                entries = entries.filter(seq__gte=int(since))
            else:
                when = parse_datetime(since)
                if when is None:
                    raise CommandError(f"--since: {since!r} is neither a seq nor an ISO 8601 time")
                if timezone.is_naive(when):
                    when = timezone.make_aware(when, datetime.UTC)
                entries = entries.filter(at__gte=when)
        if project:
            named = Q(project=project) | (Q(project_id=int(project)) if project.isdigit() else Q())
            entries = entries.filter(named)
        first = entries.values_list("seq", flat=True).first()
        last = entries.values_list("seq", flat=True).last()
        public = signing.public_key_text()
        header = {
            "type": EXPORT_TYPE,
            "version": 1,
            "exported_at": chain.iso(timezone.now()),
            "public_key": public,
            "key_id": signing.key_id(public),
            "from_seq": first,
            "to_seq": last,
            "project": project,
            # One project's entries leave the others out: each entry's hash still proves it, the chain does not.
            "cut": bool(project),
        }
        points = Checkpoint.objects.order_by("seq")
        if first is not None:
            points = points.filter(seq__gte=first)
        lines = [json.dumps(header)]
        count = 0
        for entry in entries.iterator(chunk_size=2000):
            lines.append(json.dumps({"type": "entry", **chain.as_dict(entry)}, ensure_ascii=False))
            count += 1
        lines += [json.dumps({"type": "checkpoint", **chain.checkpoint_dict(p)}) for p in points]
        text = "\n".join(lines) + "\n"
        if str(output) == "-":
            self.stdout.write(text, ending="")
            return
        output.write_text(text, encoding="utf-8")
        self.stdout.write(f"Wrote {count} entries (seq {first} to {last}) and their checkpoints to {output}.")


def _verify_file(file: Path, public: str | None) -> tuple[chain.Verified, str]:
    try:
        raw = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"--file: cannot read {file}: {exc.strerror}") from None
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(raw, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise CommandError(f"--file: line {number} is not JSON") from None
        if not isinstance(row, dict):
            raise CommandError(f"--file: line {number} is not an object")
        rows.append(row)
    if not rows or rows[0].get("type") != EXPORT_TYPE:
        raise CommandError(f"--file: {file} is not an audit export (its first line names no {EXPORT_TYPE})")
    header = rows[0]
    public = public or str(header.get("public_key") or "")
    entries = [r for r in rows[1:] if r.get("type") == "entry"]
    missing = [n for n, r in enumerate(entries) if set(chain.HASHED) - set(r) or "hash" not in r]
    if missing:
        raise CommandError(f"--file: entry {missing[0] + 1} lacks a field the hash covers")
    points = [r for r in rows[1:] if r.get("type") == "checkpoint"]
    first = header.get("from_seq") or 1
    result = chain.verify(entries, points, public, first_seq=int(first), chained=not header.get("cut"))
    if result.ok and header.get("to_seq") is not None and result.through_seq != header["to_seq"]:
        result.ok, result.problem = (
            False,
            (f"seq {result.through_seq + 1}: missing: the export says it runs to seq {header['to_seq']}"),
        )
    if header.get("cut"):
        result.notes.append(
            f"One project's entries ({header.get('project')}): each entry's hash is checked, the chain between "
            "them is not (the other projects' entries were left out)."
        )
    if int(first) > 1 and not header.get("cut"):
        result.notes.append(f"From seq {first}: its prev is taken as given.")
    return result, public
