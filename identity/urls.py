from __future__ import annotations

from django.urls import path, re_path

from identity import passkeys, scim, views

app_name = "identity"

urlpatterns = [
    path("sso/login", views.start, name="start"),
    path("sso/callback", views.callback, name="callback"),
    path("sso/passkey/options", passkeys.sign_in_options, name="passkey-options"),
    path("sso/passkey", passkeys.sign_in, name="passkey"),
    path("account/passkeys/", passkeys.page, name="passkeys"),
    path("account/passkeys/options", passkeys.registration_options, name="passkey-registration-options"),
    path("account/passkeys/add", passkeys.register, name="passkey-add"),
    path("account/passkeys/<int:pk>/remove", passkeys.remove, name="passkey-remove"),
    re_path(r"^scim/v2/(?P<path>.*)$", scim.endpoint, name="scim"),
]
