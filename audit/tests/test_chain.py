"""The chain proves itself: verify passes on what was written and names the first entry that was changed, removed,
reordered or cut away, in the database and in an export read alone."""

from __future__ import annotations

import base64
import itertools
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction

from audit import chain, runtime, signing
from audit.models import Checkpoint, Entry, ImmutableEntry, Verification
from core.acting import Actor

ALICE = Actor("person", "alice", "1")


def audit(*args: str) -> str:
    out = StringIO()
    call_command("audit", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def five(db: None) -> list[Entry]:
    return [chain.record("rule.created", ALICE, target=f"rule {n}", details={"n": n}) for n in range(1, 6)]


def tamper(sql: str, *params: Any) -> None:
    """What someone with the database file does: drop the triggers that refuse it, then change the table."""
    with connection.cursor() as cursor:
        for name in ("audit_entry_no_update", "audit_entry_no_delete"):
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        cursor.execute(sql, params)


def test_the_chain_runs_from_seq_1_each_entry_holding_the_hash_before_it(five: list[Entry]) -> None:
    assert [e.seq for e in five] == [1, 2, 3, 4, 5]
    assert five[0].prev == ""
    assert all(later.prev == earlier.hash for earlier, later in itertools.pairwise(five))
    assert "Verified 5 entries of the database through seq 5" in audit("verify")
    assert Verification.objects.get().through_seq == 5


def test_the_database_refuses_to_change_or_delete_an_entry(five: list[Entry]) -> None:
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE audit_entry SET actor = 'mallory' WHERE seq = 3")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM audit_entry WHERE seq = 3")
    with pytest.raises(ImmutableEntry):
        five[2].delete()
    five[2].actor = "mallory"
    with pytest.raises(ImmutableEntry):
        five[2].save()
    assert Entry.objects.get(seq=3).actor == "alice"


def test_verify_names_the_entry_whose_field_was_changed(five: list[Entry]) -> None:
    tamper("UPDATE audit_entry SET actor = 'mallory' WHERE seq = 3")
    with pytest.raises(CommandError, match="seq 3: its hash does not match what it holds"):
        audit("verify")
    assert Verification.objects.get().problem.startswith("seq 3:")


def test_verify_names_the_entry_that_was_deleted(five: list[Entry]) -> None:
    tamper("DELETE FROM audit_entry WHERE seq = 3")
    with pytest.raises(CommandError, match=r"seq 3: missing \(the next entry is seq 4\)"):
        audit("verify")


def test_verify_finds_two_entries_swapped(five: list[Entry]) -> None:
    tamper("UPDATE audit_entry SET seq = 100 WHERE seq = 2")
    tamper("UPDATE audit_entry SET seq = 2 WHERE seq = 3")
    tamper("UPDATE audit_entry SET seq = 3 WHERE seq = 100")
    with pytest.raises(CommandError, match="seq 2: its prev is not the hash of seq 1"):
        audit("verify")


def test_verify_finds_a_tail_cut_off(five: list[Entry]) -> None:
    tamper("DELETE FROM audit_entry WHERE seq >= 4")
    with pytest.raises(CommandError, match="seq 4: missing: the chain ends at seq 3 but seq 5 was written"):
        audit("verify")


def test_a_rewritten_entry_with_its_hash_recomputed_breaks_the_next_ones_link(five: list[Entry]) -> None:
    values = chain.as_dict(five[2])
    values["actor"] = "mallory"
    tamper("UPDATE audit_entry SET actor = 'mallory', hash = %s WHERE seq = 3", chain.entry_hash(values))
    with pytest.raises(CommandError, match="seq 4: its prev is not the hash of seq 3"):
        audit("verify")


def test_a_checkpoint_is_signed_every_n_entries_and_checked(db: None, settings: Any) -> None:
    settings.HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY = 3
    for n in range(7):
        chain.record("rule.created", ALICE, details={"n": n})
    assert sorted(Checkpoint.objects.values_list("seq", flat=True)) == [1, 3, 6]
    assert "signed through seq 6" in audit("verify")


def test_a_checkpoint_signed_by_another_key_is_refused(five: list[Entry]) -> None:
    runtime.signing_key = Ed25519PrivateKey.generate()  # what someone re-signing the chain would hold
    try:
        chain.checkpoint()
    finally:
        runtime.signing_key = None
    with pytest.raises(CommandError, match="checkpoint at seq 5: not signed by this key"):
        audit("verify")


def export_lines(tmp_path: Path, *args: str) -> tuple[Path, list[str]]:
    out = tmp_path / "audit.jsonl"
    audit("export", "--output", str(out), *args)
    return out, out.read_text().splitlines()


def test_an_export_verifies_alone_and_fails_when_a_middle_line_is_changed_or_removed(
    five: list[Entry], tmp_path: Path
) -> None:
    out, lines = export_lines(tmp_path)
    header = json.loads(lines[0])
    assert (header["from_seq"], header["to_seq"], header["public_key"]) == (1, 5, signing.public_key_text())
    exported = [json.loads(line) for line in lines[1:] if '"type": "entry"' in line]
    assert [e["seq"] for e in exported] == [1, 2, 3, 4, 5]
    assert {"seq", "at", "actor", "action", "prev", "hash"} <= set(exported[0])
    assert "Verified 5 entries" in audit("verify", "--file", str(out))

    changed = json.loads(lines[3])
    changed["actor"] = "mallory"
    out.write_text("\n".join([*lines[:3], json.dumps(changed), *lines[4:]]) + "\n")
    with pytest.raises(CommandError, match="seq 3: its hash does not match"):
        audit("verify", "--file", str(out))

    out.write_text("\n".join([*lines[:3], *lines[4:]]) + "\n")
    with pytest.raises(CommandError, match="seq 3: missing"):
        audit("verify", "--file", str(out))


def test_an_export_checked_against_the_published_key_refuses_one_signed_by_another(
    five: list[Entry], tmp_path: Path
) -> None:
    out, _ = export_lines(tmp_path)
    other = base64.b64encode(
        Ed25519PrivateKey.generate().public_key().public_bytes_raw()  # someone else's key
    ).decode()
    with pytest.raises(CommandError, match="not signed by this key"):
        audit("verify", "--file", str(out), "--public-key", other)
    assert "Verified 5" in audit("verify", "--file", str(out), "--public-key", signing.public_key_text())


def test_one_projects_export_holds_only_its_entries_and_says_the_chain_was_cut(db: None, tmp_path: Path) -> None:
    from projects.models import Project

    shop = Project.objects.create(name="shop")
    chain.record("rule.created", ALICE, project=shop)
    chain.record("rule.created", ALICE)
    chain.record("rule.deleted", ALICE, project=shop)
    out, lines = export_lines(tmp_path, "--project", "shop")
    assert json.loads(lines[0])["cut"] is True
    kept = [json.loads(line) for line in lines[1:] if '"type": "entry"' in line]
    assert {e["project"] for e in kept} == {"shop"}
    said = audit("verify", "--file", str(out))
    assert "the chain between them is not" in said
    assert "Verified 2 entries" in said


def test_bad_input_to_the_command_names_what_is_wrong(db: None, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--since: 'yesterday' is neither a seq nor an ISO 8601 time"):
        audit("export", "--output", str(tmp_path / "x"), "--since", "yesterday")
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"type": "entry"}\n')
    with pytest.raises(CommandError, match="is not an audit export"):
        audit("verify", "--file", str(junk))
    with pytest.raises(CommandError, match="cannot read"):
        audit("verify", "--file", str(tmp_path / "missing.jsonl"))


def test_a_purge_drops_only_what_a_signed_checkpoint_covers_and_what_stays_still_verifies(
    db: None, settings: Any
) -> None:
    import datetime

    from django.utils import timezone

    settings.HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY = 4
    for n in range(6):
        chain.record("rule.created", ALICE, details={"n": n})
    later = timezone.now() + datetime.timedelta(seconds=1)
    out = StringIO()
    call_command("purge", "--older-than", "1h", "--audit", stdout=out)
    assert "Removed no audit entries: no signed checkpoint is that old yet." in out.getvalue()
    assert chain.purge_before(later) == (4, 4)
    assert list(Entry.objects.order_by("seq").values_list("seq", flat=True)) == [5, 6, 7]
    assert Entry.objects.get(seq=7).action == "audit.purged"
    assert Entry.objects.get(seq=7).details["through_seq"] == 4
    assert "Verified 3 entries of the database through seq 7" in audit("verify")
    # The entries after the checkpoint are still bound to it: one changed is found.
    tamper("UPDATE audit_entry SET prev = 'x' WHERE seq = 5")
    with pytest.raises(CommandError, match="seq 5: its prev is not the hash of seq 4"):
        audit("verify")


def test_a_quiet_records_head_is_signed_once_the_minutes_have_passed(db: None, settings: Any) -> None:

    settings.HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY = 100
    for n in range(3):
        chain.record("rule.created", ALICE, details={"n": n})
    assert list(Checkpoint.objects.values_list("seq", flat=True)) == [1], "the first entry is signed at once"
    assert chain.sign_head_if_due() is None, "within the minutes: not yet"
    # Two hours pass (the checkpoint's time moved back, its trigger dropped for it).
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS audit_checkpoint_no_update")
        cursor.execute("UPDATE audit_checkpoint SET at = datetime(at, '-2 hours')")
    signed = chain.sign_head_if_due()
    assert signed is not None
    assert signed.seq == 3
    assert chain.sign_head_if_due() is None, "nothing new since"
