"""Images with an answer (issue 29 point 7): checked from their bytes, kept with the answer, refused by field."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from questions import images
from questions.models import AnswerImage, Question, Status
from testing.images import GIF, PNG
from tokens.models import AgentToken

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 24


@pytest.fixture
def answer_bot(db: None) -> str:
    return AgentToken.issue("answer-bot", scope="answer")[1]


@pytest.fixture
def asked(agent: tuple[AgentToken, str]) -> Question:
    return Question.ask(asker=agent[0], asker_name="agent-a", text="What does the page look like?", options=[])[0]


def post(client: Client, token: str, body: dict[str, Any]) -> Any:
    return client.post(
        "/api/mcp-answer", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("data", "kind"), [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")]
)
def test_the_api_keeps_each_image_with_the_answer(
    client: Client, answer_bot: str, asked: Question, data: bytes, kind: str
) -> None:
    body = {
        "questionId": str(asked.pk),
        "answer": "See the picture",
        "images": [{"mimeType": kind, "data": encoded(data)}],
    }
    response = post(client, answer_bot, body)
    assert response.status_code == 200, response.content
    (kept,) = AnswerImage.objects.for_question(asked.pk)
    assert (kept.mime_type, bytes(kept.data), kept.size) == (kind, data, len(data))
    assert Question.objects.get(pk=asked.pk).answer.image_count == 1


@pytest.mark.parametrize(
    ("images_value", "field", "says"),
    [
        ("x", "images", "must be a list"),
        ([{"mimeType": "image/svg+xml", "data": encoded(b"<svg/>")}], "images[0].mimeType", "must be one of image/png"),
        ([{"mimeType": "image/png", "data": "not base64!"}], "images[0].data", "is not valid base64"),
        ([{"mimeType": "image/png", "data": encoded(b"<html>")}], "images[0].data", "not a PNG, JPEG, WebP or GIF"),
        ([{"mimeType": "image/png", "data": encoded(JPEG)}], "images[0].data", "is a JPEG image, not image/png"),
        ([{"mimeType": "image/png", "data": encoded(PNG), "name": "x"}], "images[0]", '"mimeType" and "data" only'),
        ([{"mimeType": "image/png", "data": encoded(PNG)}] * 5, "images", "At most 4 images"),
    ],
)
def test_the_api_refuses_a_bad_image_naming_the_field_and_keeps_nothing(
    client: Client, answer_bot: str, asked: Question, images_value: Any, field: str, says: str
) -> None:
    response = post(client, answer_bot, {"questionId": str(asked.pk), "answer": "typed", "images": images_value})
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert says in response.json()["error"]
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING
    assert not AnswerImage.objects.exists()


def test_the_api_refuses_an_image_over_the_size_limit(
    client: Client, answer_bot: str, asked: Question, settings: Any
) -> None:
    settings.HOOKBRIDGE_MAX_IMAGE_BYTES = 100
    big = PNG + b"\x00" * 100
    response = post(
        client,
        answer_bot,
        {"questionId": str(asked.pk), "answer": "t", "images": [{"mimeType": "image/png", "data": encoded(big)}]},
    )
    assert response.status_code == 400
    assert response.json()["field"] == "images[0].data"
    assert "at most" in response.json()["error"]


def test_the_api_takes_a_body_as_large_as_four_of_the_largest_images(
    client: Client, answer_bot: str, asked: Question
) -> None:
    largest = PNG + b"\x00" * (5 * 1024 * 1024 - len(PNG))
    body = {
        "questionId": str(asked.pk),
        "answer": "four",
        "images": [{"mimeType": "image/png", "data": encoded(largest)}] * 4,
    }
    response = post(client, answer_bot, body)
    assert response.status_code == 200, response.content[:300]
    assert len(AnswerImage.objects.for_question(asked.pk)) == 4
    too_much = client.post(
        "/api/mcp-answer", b"{" + b" " * images.answer_body_limit() + b"}", content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {answer_bot}",
    )  # fmt: skip
    assert too_much.status_code == 413
    assert "HOOKBRIDGE_MAX_IMAGE_BYTES" in too_much.json()["error"]


def test_a_kind_without_free_text_takes_no_images(
    client: Client, answer_bot: str, agent: tuple[AgentToken, str]
) -> None:
    payload = {"title": "Rate", "description": "d", "hypotheses": ["one"]}
    rated = Question.ask(asker=agent[0], asker_name="a", text="Rate", options=[], kind="hypothesis", payload=payload)[0]
    body = {
        "questionId": str(rated.pk),
        "answer": {"ratings": [{"rating": 4}]},
        "images": [{"mimeType": "image/png", "data": encoded(PNG)}],
    }
    response = post(client, answer_bot, body)
    assert response.status_code == 400
    assert response.json()["field"] == "images"
    assert Question.objects.get(pk=rated.pk).status == Status.PENDING


def upload(name: str, data: bytes, kind: str = "image/png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=kind)


def test_the_dashboard_form_keeps_pasted_images(logged_in: Client, asked: Question) -> None:
    response = logged_in.post(
        f"/questions/{asked.pk}/answer", {"answer": "Like this", "images": [upload("a.png", PNG), upload("b.gif", GIF)]}
    )
    assert response.status_code == 200
    kept = AnswerImage.objects.for_question(asked.pk)
    assert [(image.position, image.mime_type) for image in kept] == [(0, "image/png"), (1, "image/gif")]


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ([upload("page.png", b"<html><script>alert(1)</script>", "image/png")], "not a PNG, JPEG, WebP or GIF"),
        ([upload(f"{n}.png", PNG) for n in range(5)], "At most 4 images"),
    ],
)
def test_the_dashboard_form_refuses_bad_images_and_keeps_what_was_typed(
    logged_in: Client, asked: Question, files: list[SimpleUploadedFile], says: str
) -> None:
    response = logged_in.post(f"/questions/{asked.pk}/answer", {"answer": "Typed with care", "images": files})
    assert response.status_code == 422
    page = response.content.decode()
    assert says in page
    assert "Typed with care</textarea>" in page
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING


def test_an_answers_image_is_served_to_people_who_log_in_only(
    client: Client, logged_in: Client, user: User, asked: Question
) -> None:
    asked.record_answer("see", by_user=user, images=[images.checked(PNG, "images")])
    answer = Question.objects.get(pk=asked.pk).answer
    served = logged_in.get(f"/answers/{answer.pk}/images/1")
    assert served.status_code == 200
    assert served["Content-Type"] == "image/png"
    assert served["X-Content-Type-Options"] == "nosniff"
    assert served.content == PNG
    assert logged_in.get(f"/answers/{answer.pk}/images/2").status_code == 404
    logged_in.logout()
    assert client.get(f"/answers/{answer.pk}/images/1").status_code == 302


def test_the_history_and_the_questions_page_show_the_images(logged_in: Client, user: User, asked: Question) -> None:
    asked.record_answer("see", by_user=user, images=[images.checked(PNG, "images"), images.checked(GIF, "images")])
    answer = Question.objects.get(pk=asked.pk).answer
    for page in (logged_in.get("/history/"), logged_in.get(f"/questions/{asked.pk}/")):
        html = page.content.decode()
        assert f'<img src="/answers/{answer.pk}/images/1" alt="Image 1 of 2 with the answer"' in html
        assert f'<img src="/answers/{answer.pk}/images/2" alt="Image 2 of 2 with the answer"' in html


def test_the_admin_shows_an_answers_images(client: Client, user: User, asked: Question) -> None:
    asked.record_answer("see", by_user=user, images=[images.checked(PNG, "images")])
    answer = Question.objects.get(pk=asked.pk).answer
    admin = User.objects.create_superuser("root", password="pw-root-12345")
    client.force_login(admin)
    page = client.get(f"/admin/questions/answer/{answer.pk}/change/").content.decode()
    assert f'<img src="/answers/{answer.pk}/images/1" alt="Image 1" width="96">' in page
