from __future__ import annotations

from django.urls import path, re_path

from identity import scim, views

app_name = "identity"

urlpatterns = [
    path("sso/login", views.start, name="start"),
    path("sso/callback", views.callback, name="callback"),
    re_path(r"^scim/v2/(?P<path>.*)$", scim.endpoint, name="scim"),
]
