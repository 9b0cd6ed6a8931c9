"""The audit record in the admin: read only, even for a superuser; the last verify and the public key above it."""

from __future__ import annotations

from io import StringIO

from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from audit import signing
from audit.models import Entry
from questions.models import Question
from tokens.models import AgentToken


def superuser_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser("root", password="pw-root-123"))
    return client


def test_the_list_says_the_last_verify_and_the_key_and_offers_no_change(client: Client, db: None) -> None:
    admin = superuser_client(client)
    call_command("audit", "verify", stdout=StringIO())
    page = admin.get("/admin/audit/entry/")
    assert page.status_code == 200
    text = page.content.decode()
    last = Entry.objects.order_by("-seq").first()
    assert last is not None
    assert f"Verified through seq {last.seq}" in text
    assert signing.public_key_text() in text
    assert "/admin/audit/entry/add/" not in text
    assert admin.get("/admin/audit/entry/add/").status_code == 403
    entry_page = admin.get(f"/admin/audit/entry/{last.pk}/change/")
    assert entry_page.status_code == 200
    assert b'name="_save"' not in entry_page.content
    refused = admin.post(f"/admin/audit/entry/{last.pk}/delete/", {"post": "yes"})
    assert refused.status_code == 403
    assert Entry.objects.filter(pk=last.pk).exists()


def test_a_questions_admin_page_lists_its_own_entries(client: Client, agent: tuple[AgentToken, str]) -> None:
    admin = superuser_client(client)
    question = Question.ask(asker=agent[0], asker_name="agent-a", text="Deploy?", options=[])[0]
    question.dismiss("root")
    page = admin.get(f"/admin/questions/question/{question.pk}/change/")
    assert page.status_code == 200
    entry = Entry.objects.get(action="question.dismissed")
    assert f"#{entry.seq}</a>" in page.content.decode()
    assert "question.dismissed by" in page.content.decode()
