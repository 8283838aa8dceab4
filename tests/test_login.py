"""The site's own login and logout: any active account logs in (issue 43, part 7), staff pages still refuse non-staff.

The admin's login refuses accounts that are not staff; the site's
(`LOGIN_URL`) takes every active account, so a team that submits but is
not staff can log in at all.
"""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-password"


def account(username: str, **fields):
    return get_user_model().objects.create_user(username, password=PASSWORD, **fields)


def test_an_account_that_is_not_staff_logs_in_and_out():
    account("team-a")
    client = Client()
    page = client.get(reverse("login"))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<nav aria-label="Main">' in html and 'name="username"' in html and 'name="password"' in html

    response = client.post(reverse("login"), {"username": "team-a", "password": PASSWORD, "next": "/rollouts/"})
    assert (response.status_code, response["Location"]) == (302, "/rollouts/")
    home = client.get("/").content.decode()
    assert "team-a" in home and reverse("logout") in home
    # Logged in, not staff: a staff page is still refused, with the site's own page.
    assert client.get(reverse("evaluations:campaign_new")).status_code == 403

    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session
    assert reverse("login") in client.get("/").content.decode()


def test_a_wrong_password_or_an_inactive_account_does_not_log_in():
    account("team-a")
    account("gone", is_active=False)
    client = Client()
    for username, password in (("team-a", "wrong"), ("gone", PASSWORD)):
        response = client.post(reverse("login"), {"username": username, "password": password})
        assert response.status_code == 200, username
        assert "_auth_user_id" not in client.session
        assert "errornote" in response.content.decode() or "error" in response.content.decode()


def test_an_anonymous_visitor_of_a_staff_page_goes_to_the_sites_login_and_back():
    account("staff", is_staff=True)
    client = Client()
    url = reverse("evaluations:campaign_new")
    response = client.get(url)
    location = urlsplit(response["Location"])
    assert (location.path, parse_qs(location.query)) == (reverse("login"), {"next": [url]})
    form = client.get(response["Location"]).content.decode()
    assert f'value="{url}"' in form
    back = client.post(reverse("login"), {"username": "staff", "password": PASSWORD, "next": url})
    assert back["Location"] == url
    assert client.get(url).status_code == 200


def test_a_login_with_a_refused_next_lands_on_the_leaderboard():
    account("team-a")
    response = Client().post(
        reverse("login") + "?next=https://evil.example/steal",
        {"username": "team-a", "password": PASSWORD, "next": "https://evil.example/steal"},
    )
    assert (response.status_code, response["Location"]) == (302, "/")


def test_logout_is_a_post():
    """A GET must not log anyone out (a link in a page could): Django's LogoutView takes POST only."""
    account("team-a")
    client = Client()
    client.login(username="team-a", password=PASSWORD)
    assert client.get(reverse("logout")).status_code == 405
    assert "_auth_user_id" in client.session
