"""Issue 56's "done when", as an admin would check it on a real server: after an answer through the JSON API, a
`create_token` and a sign-in, `audit verify` passes naming how many entries; `audit export` writes JSON Lines
from seq 1 without gaps holding all three; `audit verify --file` passes on it alone and fails when a middle line
is changed or removed; a stored entry changed behind the database's back makes `audit verify` name its seq."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.live import LiveServer, serving, sqlite_at


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def test_an_answer_a_token_and_a_sign_in_are_recorded_verified_exported_and_tampering_is_named(
    server: LiveServer, tmp_path: Path
) -> None:
    text = "Audited: deploy the docs?"
    async with server.mcp() as client:
        asked = asyncio.ensure_future(client.call_tool("ask_question", {"question": text}))
        question = await server.wait_for_question(text)
        assert (await server.answer_via_api(question["id"], "yes, deploy")).status_code == 200
        await asked
    made = server.run_manage("create_token", "auditor-bot")
    assert made.returncode == 0, made.stderr
    async with server.login():
        pass

    verified = server.run_manage("audit", "verify")
    assert verified.returncode == 0, verified.stderr
    assert "Verified " in verified.stdout
    assert "entries of the database through seq" in verified.stdout

    out = tmp_path / "audit.jsonl"
    exported = server.run_manage("audit", "export", "--output", str(out))
    assert exported.returncode == 0, exported.stderr
    lines = out.read_text().splitlines()
    entries = [json.loads(line) for line in lines if json.loads(line)["type"] == "entry"]
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    assert all({"seq", "at", "actor", "action", "prev", "hash"} <= set(e) for e in entries)
    actions = {(e["action"], e["target"].split(" ")[0]) for e in entries}
    assert ("question.answered", "question") in actions
    assert any(e["action"] == "token.issued" and "auditor-bot" in e["target"] for e in entries)
    assert any(e["action"] == "signin.succeeded" and e["actor"] == server.username for e in entries)
    assert server.run_manage("audit", "verify", "--file", str(out)).returncode == 0

    middle = len(lines) // 2
    while json.loads(lines[middle])["type"] != "entry":
        middle -= 1
    changed = json.loads(lines[middle])
    changed["actor"] = "someone else"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([*lines[:middle], json.dumps(changed), *lines[middle + 1 :]]) + "\n")
    failed = server.run_manage("audit", "verify", "--file", str(edited))
    assert failed.returncode == 1
    assert f"seq {changed['seq']}: its hash does not match" in failed.stderr
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join([*lines[:middle], *lines[middle + 1 :]]) + "\n")
    failed = server.run_manage("audit", "verify", "--file", str(cut))
    assert failed.returncode == 1
    assert f"seq {changed['seq']}: missing" in failed.stderr

    target = changed["seq"]
    with sqlite_at(server.tmp / "db.sqlite3") as db:
        with pytest.raises(Exception, match="append-only"):
            db.execute("UPDATE audit_entry SET actor = 'someone else' WHERE seq = ?", (target,))
        # Someone with the file itself can drop the trigger: what they change is still found.
        db.execute("DROP TRIGGER audit_entry_no_update")
        db.execute("UPDATE audit_entry SET actor = 'someone else' WHERE seq = ?", (target,))
    failed = server.run_manage("audit", "verify")
    assert failed.returncode == 1
    assert f"seq {target}: its hash does not match what it holds" in failed.stderr
