"""Error pages keep the site's layout and say what was not found."""
import pytest
from django.test import Client
from django.urls import reverse

from trajectories.tests import factories

pytestmark = pytest.mark.django_db


def test_404_uses_the_site_layout_and_the_reason(client):
    rollout = factories.make_explored_rollout()
    response = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]) + "?step=99")
    assert response.status_code == 404
    html = response.content.decode()
    assert '<nav aria-label="Main">' in html
    assert f"Rollout {rollout.pk} has no step &#x27;99&#x27;" in html


def test_404_for_an_unknown_path_names_it(client):
    """It said "Resolver404", Django's name for the exception, on every mistyped address."""
    html = client.get("/no-such-page/").content.decode()
    assert "Not found" in html and '<nav aria-label="Main">' in html
    assert "There is nothing at <code>/no-such-page/</code>." in html and "Resolver404" not in html


def test_a_404_reason_quoting_a_long_value_is_cut(client):
    """A 3,500-character version name came back whole in a 4.5 KB page; 400s cut values at 60 characters."""
    response = client.get("/heatmap/", {"version": "x" * 3500})
    assert response.status_code == 404
    reason = response.content.decode().split("<h1>Not found</h1>", 1)[1].split("</p>", 1)[0]
    assert "no benchmark version" in reason and "…" in reason and len(reason) < 300


def test_500_uses_the_site_layout(settings):
    from django.urls import include, path

    def boom(request):
        raise RuntimeError("boom")

    # The site's own URLs (the layout links to them) and one view that fails.
    settings.ROOT_URLCONF = type("urls", (), {"urlpatterns": [path("boom/", boom), path("", include("autolab_site.urls"))]})
    client = Client(raise_request_exception=False)
    response = client.get("/boom/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Server error" in html and "boom" not in html
