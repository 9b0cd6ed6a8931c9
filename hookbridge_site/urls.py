"""The site's URLs: each app's own, and the login pages."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("dashboard.urls")),
    path("", include("questions.urls")),
    path("", include("lifecycle.urls")),
    path("", include("hooks.urls")),
    path("", include("tokens.urls")),
    path("", include("notify.urls")),
    path("", include("tokens.oauth_urls")),
]
