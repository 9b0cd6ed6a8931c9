"""Passkeys (WebAuthn) for local logins: a person adds one on their page and signs in with it instead of a password.

The ceremonies are the `webauthn` library's (py_webauthn): options made here, the browser's answer verified against
the challenge kept in the session, this host as the relying party and this origin. A passkey is a local login, so
under HOOKBRIDGE_OIDC_ONLY it works for the break-glass people alone, as their passwords do.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from webauthn import (
    base64url_to_bytes,
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from identity.backends import password_allowed
from identity.models import Passkey
from identity.views import BACKEND, _safe_next

logger = logging.getLogger(__name__)

REGISTERING = "hookbridge_passkey_registration"
SIGNING_IN = "hookbridge_passkey_sign_in"


def _person(request: HttpRequest) -> Any:
    return request.user  # behind login_required: a person, never AnonymousUser


def _rp_id(request: HttpRequest) -> str:
    return request.get_host().rsplit(":", 1)[0].strip("[]")


def _origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


def _refused(field: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": f"{field}: {message}"}, status=status)


def _answer(request: HttpRequest, ceremony: str, unstarted: str) -> tuple[dict[str, Any], str] | JsonResponse:
    """The browser's answer and the challenge this session was given for it (spent now, used or not)."""
    challenge = request.session.pop(ceremony, None)
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("credential"), dict):
        return _refused("credential", "the browser's answer is missing or not JSON")
    if challenge is None:
        return _refused("credential", unstarted)
    return body, str(challenge)


@login_required
@require_GET
def page(request: HttpRequest) -> HttpResponse:
    passkeys = Passkey.objects.filter(user_id=_person(request).pk)
    allowed = password_allowed(request.user.get_username())
    return render(request, "identity/passkeys.html", {"passkeys": passkeys, "allowed": allowed})


@login_required
@require_POST
def registration_options(request: HttpRequest) -> HttpResponse:
    person = _person(request)
    options = generate_registration_options(
        rp_id=_rp_id(request),
        rp_name="Hook Bridge",
        user_id=f"hookbridge-{person.pk}".encode(),
        user_name=person.get_username(),
        user_display_name=person.get_full_name() or person.get_username(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
            for p in Passkey.objects.filter(user_id=person.pk)
        ],
    )
    request.session[REGISTERING] = options.challenge.hex()
    return HttpResponse(options_to_json(options), content_type="application/json")


@login_required
@require_POST
def register(request: HttpRequest) -> HttpResponse:
    answer = _answer(request, REGISTERING, "no passkey was being added here: start again")
    if isinstance(answer, JsonResponse):
        return answer
    body, challenge = answer
    name = str(body.get("name") or "").strip()[:100] or "Passkey"
    try:
        verified = verify_registration_response(
            credential=body["credential"], expected_challenge=bytes.fromhex(challenge),
            expected_rp_id=_rp_id(request), expected_origin=_origin(request), require_user_verification=True,
        )  # fmt: skip
    except (InvalidRegistrationResponse, ValueError, KeyError, TypeError) as error:
        logger.info("A passkey of %s was refused: %s", request.user.get_username(), error)
        return _refused("credential", f"the passkey was not accepted ({error})")
    credential_id = body["credential"].get("id", "")
    if Passkey.objects.filter(credential_id=credential_id).exists():
        return _refused("credential", "this passkey is added already", status=409)
    transports = body["credential"].get("response", {}).get("transports") or []
    Passkey.objects.create(
        user=_person(request), name=name, credential_id=credential_id, public_key=verified.credential_public_key,
        sign_count=verified.sign_count, transports=[str(t) for t in transports][:10],
    )  # fmt: skip
    return JsonResponse({"added": name}, status=201)


@login_required
@require_POST
def remove(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Passkey, pk=pk, user=_person(request)).delete()  # another person's passkey is a 404
    return redirect("identity:passkeys")


@require_POST
def sign_in_options(request: HttpRequest) -> HttpResponse:
    options = generate_authentication_options(
        rp_id=_rp_id(request), user_verification=UserVerificationRequirement.REQUIRED
    )
    request.session[SIGNING_IN] = options.challenge.hex()
    return HttpResponse(options_to_json(options), content_type="application/json")


@require_POST
def sign_in(request: HttpRequest) -> HttpResponse:
    answer = _answer(request, SIGNING_IN, "this sign-in was not started here, or was used already: start again")
    if isinstance(answer, JsonResponse):
        return answer
    body, challenge = answer
    passkey = Passkey.objects.select_related("user").filter(credential_id=str(body["credential"].get("id", ""))).first()
    refusal = _refused("credential", "this passkey is not known here, or not yours to sign in with", status=403)
    if passkey is None or not passkey.user.is_active or not password_allowed(passkey.user.get_username()):
        return refusal
    try:
        verified = verify_authentication_response(
            credential=body["credential"], expected_challenge=bytes.fromhex(challenge),
            expected_rp_id=_rp_id(request), expected_origin=_origin(request),
            credential_public_key=bytes(passkey.public_key), credential_current_sign_count=passkey.sign_count,
            require_user_verification=True,
        )  # fmt: skip
    except (InvalidAuthenticationResponse, ValueError, KeyError, TypeError) as error:
        logger.info("A passkey sign-in was refused: %s", error)
        return refusal
    passkey.used(verified.new_sign_count)
    login(request, passkey.user, backend=BACKEND)
    return JsonResponse({"next": _safe_next(request, str(body.get("next") or ""))})
