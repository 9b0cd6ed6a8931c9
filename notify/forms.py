"""What a browser sends to turn push on, and what a notification's button sends back (notify.push_views)."""

from __future__ import annotations

import base64
import binascii

from django import forms

from notify import push

# An uncompressed P-256 point (RFC 8291: the browser's ECDH key) and the 16-byte authentication secret.
P256_POINT_BYTES = 65
AUTH_SECRET_BYTES = 16


def _base64url(value: str, size: int, what: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise forms.ValidationError(f"{what} is not base64url") from None
    if len(raw) != size or (size == P256_POINT_BYTES and raw[0] != 4):
        raise forms.ValidationError(f"{what} is not a {size}-byte key as a browser gives it")
    return value


class Subscription(forms.Form):
    """A browser's PushSubscription (its toJSON(): endpoint and keys), flattened: p256dh and auth are its keys."""

    endpoint = forms.URLField(max_length=2000, assume_scheme="https")
    p256dh = forms.CharField(max_length=200)
    auth = forms.CharField(max_length=100)
    device = forms.CharField(max_length=200, required=False)

    def clean_endpoint(self) -> str:
        endpoint: str = self.cleaned_data["endpoint"]
        if not push.allowed(endpoint):
            raise forms.ValidationError(
                f"{push.service_of(endpoint) or endpoint} is not a push service this server posts to "
                "(HOOKBRIDGE_PUSH_SERVICES)"
            )
        return endpoint

    def clean_p256dh(self) -> str:
        return _base64url(self.cleaned_data["p256dh"], P256_POINT_BYTES, "keys.p256dh")

    def clean_auth(self) -> str:
        return _base64url(self.cleaned_data["auth"], AUTH_SECRET_BYTES, "keys.auth")


class Action(forms.Form):
    """A notification's Allow or Deny: the signed token it carried, and which button."""

    token = forms.CharField(max_length=500)
    action = forms.ChoiceField(choices=[("allow", "Allow"), ("deny", "Deny")])
