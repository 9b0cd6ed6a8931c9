"""The error pages a person meets: styled, with the navigation and a way back (issue 29)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

pytestmark = [pytest.mark.django_db]


def test_a_missing_page_is_a_styled_404_with_a_way_back(client: Client) -> None:
    client.force_login(User.objects.create_user("bob", password="pw-bob-12345"))
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Not found</h1>" in page
    assert 'href="/">Back to the questions</a>' in page
    assert "hookbridge.css" in page
    assert ">History</a>" in page, "the navigation is there"


def test_the_login_page_says_where_the_first_password_comes_from(client: Client) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert "printed by <code>make serve</code> or <code>hookbridge serve</code>" in page
    assert "manage.py changepassword NAME" in page


def test_the_browsers_icon_request_finds_the_sites_icon(client: Client, db: None) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/icon.svg"
    page = client.get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/icon.svg" type="image/svg+xml">' in page
