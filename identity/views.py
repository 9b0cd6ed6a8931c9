"""The sign-in with the company's identity provider: off to it, back from it, and out of both."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import login, logout
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from identity import oidc
from identity.models import sign_in

logger = logging.getLogger(__name__)

NEXT = "hookbridge_sso_next"
ID_TOKEN = "hookbridge_sso_id_token"
BACKEND = "identity.backends.PasswordUnlessOidcOnly"


def sso_context(request: HttpRequest) -> dict[str, object]:
    """What a sign-in page (ours or the admin's) shows of the identity provider: a context processor."""
    return {
        "sso": oidc.configured(),
        "sso_name": settings.HOOKBRIDGE_OIDC_NAME,
        "sso_only": settings.HOOKBRIDGE_OIDC_ONLY,
        "sso_callback": oidc.callback_uri(request),
    }


def _safe_next(request: HttpRequest, wanted: str) -> str:
    allowed = url_has_allowed_host_and_scheme(wanted, {request.get_host()}, require_https=request.is_secure())
    return wanted if wanted and allowed else reverse(settings.LOGIN_REDIRECT_URL)


@require_GET
def start(request: HttpRequest) -> HttpResponse:
    if not oidc.configured():
        raise Http404("Sign-in with an identity provider is not set up on this server.")
    request.session[NEXT] = _safe_next(request, request.GET.get("next", ""))
    try:
        response: HttpResponse = oidc.client().authorize_redirect(request, oidc.callback_uri(request))
    except Exception as error:  # the discovery document: unreachable, or not JSON
        logger.warning("Sign-in with %s could not start: %s", settings.HOOKBRIDGE_OIDC_ISSUER, error)
        failed = oidc.SignInFailed(
            f"Hook Bridge could not read the identity provider's settings at {settings.HOOKBRIDGE_OIDC_ISSUER}.",
            "Try again in a minute; if it keeps failing, your admin must check HOOKBRIDGE_OIDC_ISSUER.",
            status=502,
            detail=str(error),
        )
        return _failed(request, failed)
    return response


@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    if not oidc.configured():
        raise Http404("Sign-in with an identity provider is not set up on this server.")
    try:
        claims = oidc.finish(request)
    except oidc.SignInFailed as failed:
        logger.info("Sign-in refused: %s (%s)", failed.title, failed.detail)
        return _failed(request, failed)
    if not claims.subject:
        return _failed(
            request, oidc.SignInFailed("The identity provider did not say who you are (no `sub`).", "Tell your admin.")
        )
    name = claims.name or " ".join(filter(None, (claims.given_name, claims.family_name)))
    person = sign_in(
        settings.HOOKBRIDGE_OIDC_ISSUER,
        claims.subject,
        email=claims.email,
        email_verified=claims.email_verified,
        username=claims.preferred_username or claims.email,
        first_name=claims.given_name or name.partition(" ")[0],
        last_name=claims.family_name or name.partition(" ")[2],
        display_name=name,
        groups=claims.groups,
    )
    if not person.is_active:
        return _failed(
            request,
            oidc.SignInFailed(
                "Your account on this server is deactivated.", "Ask your admin to turn it back on.", status=403
            ),
        )
    wanted = request.session.pop(NEXT, "")
    login(request, person, backend=BACKEND)
    request.session[ID_TOKEN] = claims.id_token
    if not person.is_superuser and not person.memberships.exists():
        groups = sorted(person.directory_groups.values_list("display_name", flat=True))
        return render(
            request,
            "identity/no_project.html",
            {
                "groups": claims.groups if claims.groups is not None else groups,
                "claim": settings.HOOKBRIDGE_OIDC_GROUPS_CLAIM,
                "provider": settings.HOOKBRIDGE_OIDC_NAME,
            },
        )
    return HttpResponseRedirect(_safe_next(request, wanted))


def _failed(request: HttpRequest, failed: oidc.SignInFailed) -> HttpResponse:
    context = {"failed": failed, "provider": settings.HOOKBRIDGE_OIDC_NAME, "debug": settings.DEBUG}
    return render(request, "identity/signin_failed.html", context, status=failed.status)


@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    """Out of Hook Bridge, and out of the provider too when it offers RP-initiated logout."""
    id_token = request.session.get(ID_TOKEN, "")
    logout(request)
    if id_token:
        after = request.build_absolute_uri(reverse("login"))
        there = oidc.logout_url(id_token, after)
        if there:
            return HttpResponseRedirect(there)
    return redirect(settings.LOGOUT_REDIRECT_URL)
