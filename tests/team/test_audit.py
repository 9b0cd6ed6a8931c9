"""Team mode, issue 56: two workers on the real PostgreSQL writing the audit record at once keep its chain gapless,
and PostgreSQL itself refuses to change an entry; one changed past the trigger is found by `audit verify`."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator

import httpx2
import psycopg
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from testing.live import LiveServer
from testing.team import two_workers

KEY = base64.b64encode(
    Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
).decode()


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[LiveServer, LiveServer]]:
    # Every worker signs with the same key, as docs/audit.md says a team server must.
    with two_workers(HOOKBRIDGE_AUDIT_SIGNING_KEY=KEY, HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY="7") as both:
        yield both


async def test_answers_on_two_workers_at_once_keep_the_chain_gapless_and_verified(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    texts = [f"audit race {n}?" for n in range(24)]
    async with worker_a.mcp() as client:
        asks = [asyncio.ensure_future(client.call_tool("ask_question", {"question": text})) for text in texts]
        ids = [(await worker_a.wait_for_question(text))["id"] for text in texts]
        # Half answered on each worker, all at once: each answer writes its entry in its own transaction.
        answers = [
            (worker_a if n % 2 else worker_b).answer_via_api(question_id, f"go {n}")
            for n, question_id in enumerate(ids)
        ]
        done = await asyncio.gather(*answers)
        assert [r.status_code for r in done] == [200] * len(ids)
        await asyncio.gather(*asks)
    with psycopg.connect(worker_a.env["DATABASE_URL"]) as db:
        seqs = [row[0] for row in db.execute("SELECT seq FROM audit_entry ORDER BY seq")]
        answered = db.execute("SELECT count(*) FROM audit_entry WHERE action = 'question.answered'").fetchone()
    assert seqs == list(range(1, len(seqs) + 1)), "gapless from 1"
    assert answered == (len(ids),)
    checked = worker_b.run_manage("audit", "verify")
    assert checked.returncode == 0, checked.stderr
    assert f"Verified {len(seqs)} entries of the database through seq {len(seqs)}" in checked.stdout


def test_a_purge_on_postgresql_drops_only_what_a_checkpoint_covers_and_the_rest_still_verifies(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    purged = worker_a.run_manage(
        "shell", "-c",
        "import datetime; from django.utils import timezone; from audit import chain; "
        "print('purged %d %d' % chain.purge_before(timezone.now() + datetime.timedelta(seconds=1)))",
    )  # fmt: skip
    assert purged.returncode == 0, purged.stderr
    said = purged.stdout.strip().splitlines()[-1].split()
    assert said[0] == "purged", purged.stdout
    dropped, through = int(said[1]), int(said[2])
    assert dropped == through >= 7, "through the last checkpoint (one every 7 entries here)"
    checked = worker_b.run_manage("audit", "verify")
    assert checked.returncode == 0, checked.stderr
    assert "Verified" in checked.stdout
    with psycopg.connect(worker_a.env["DATABASE_URL"]) as db:
        first = db.execute("SELECT min(seq) FROM audit_entry").fetchone()
        last_action = db.execute("SELECT action FROM audit_entry ORDER BY seq DESC LIMIT 1").fetchone()
    assert first == (through + 1,)
    assert last_action == ("audit.purged",)


async def test_postgresql_refuses_an_update_and_verify_names_an_entry_changed_past_the_trigger(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, _ = workers
    async with httpx2.AsyncClient(timeout=60) as http:
        made = await http.get(f"{worker_a.url}/api/questions", headers=worker_a.auth("answer-bot"))
        assert made.status_code == 200
    url = worker_a.env["DATABASE_URL"]
    with psycopg.connect(url) as db:
        bounds = db.execute("SELECT min(seq), max(seq) FROM audit_entry").fetchone()
        assert bounds is not None
        target = (bounds[0] + bounds[1]) // 2
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            db.execute("UPDATE audit_entry SET actor = 'mallory' WHERE seq = %s", (target,))
    with psycopg.connect(url) as db, pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        db.execute("DELETE FROM audit_entry WHERE seq = %s", (target,))
    # A superuser can switch the trigger off: what they change then is found.
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_append_only")
        db.execute("UPDATE audit_entry SET details = %s WHERE seq = %s", (json.dumps({"quietly": "changed"}), target))
        db.execute("ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_append_only")
    checked = worker_a.run_manage("audit", "verify")
    assert checked.returncode == 1
    assert f"seq {target}: its hash does not match what it holds" in checked.stderr
