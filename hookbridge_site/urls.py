"""The site's URLs: each app's own, and the login pages."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from identity import idjag as identity_idjag
from identity import views as identity_views


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers and feed readers ask for /favicon.ico whatever a page links: the site's icon, not a 404 logged
    as a warning into the friendly start output of `serve` (issue 39)."""
    return HttpResponsePermanentRedirect(static("icon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", identity_views.sign_out, name="logout"),
    path("admin/", admin.site.urls),
    path("", include("dashboard.urls")),
    path("", include("questions.urls")),
    path("", include("lifecycle.urls")),
    path("", include("hooks.urls")),
    path("", include("tokens.urls")),
    path("", include("notify.urls")),
    path("", include("hosts.urls")),
    path("approvals/", include("approvals.urls")),
    # Before tokens' own: the token endpoint also takes an ID-JAG (identity.idjag), then hands every other grant on.
    path("oauth/token/", identity_idjag.token),
    path("", include("tokens.oauth_urls")),
    path("", include("identity.urls")),
]
