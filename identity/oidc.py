"""Sign-in with the company's OpenID Connect provider, on Authlib's Django client.

Authlib (not mozilla-django-oidc): it reads the provider's discovery document itself (the issuer is the one
setting a person needs), does PKCE and the nonce, and checks the ID token's signature against the provider's
keys, its issuer, audience, expiry and nonce; the same library serves the JWTs the later rounds verify.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import requests
from authlib.integrations.base_client.errors import MismatchingStateError, OAuthError
from authlib.integrations.django_client import OAuth
from django.conf import settings
from django.http import HttpRequest
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError

from identity import runtime

logger = logging.getLogger(__name__)

NAME = "idp"
CALLBACK_PATH = "/sso/callback"


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_OIDC_ISSUER and settings.HOOKBRIDGE_OIDC_CLIENT_ID)


def client() -> Any:
    """The Authlib client for the configured provider (made once per process, again if the settings change)."""
    key = (
        settings.HOOKBRIDGE_OIDC_ISSUER,
        settings.HOOKBRIDGE_OIDC_CLIENT_ID,
        settings.HOOKBRIDGE_OIDC_CLIENT_SECRET,
        settings.HOOKBRIDGE_OIDC_SCOPES,
    )
    if runtime.oidc_client is None or runtime.oidc_client[0] != key:
        oauth = OAuth()
        made = oauth.register(
            name=NAME,
            client_id=settings.HOOKBRIDGE_OIDC_CLIENT_ID,
            client_secret=settings.HOOKBRIDGE_OIDC_CLIENT_SECRET or None,
            server_metadata_url=f"{settings.HOOKBRIDGE_OIDC_ISSUER}/.well-known/openid-configuration",
            client_kwargs={
                "scope": settings.HOOKBRIDGE_OIDC_SCOPES,
                "code_challenge_method": "S256",
                # A confidential client sends its secret in the body or in Basic; Basic is what every provider takes.
                "token_endpoint_auth_method": "client_secret_basic"
                if settings.HOOKBRIDGE_OIDC_CLIENT_SECRET
                else "none",
                "timeout": 10,
            },
        )
        runtime.oidc_client = (key, made)
    return runtime.oidc_client[1]


def callback_uri(request: HttpRequest) -> str:
    """Exactly `<origin>/sso/callback`: what the admin registers at the provider."""
    return f"{request.scheme}://{request.get_host()}{CALLBACK_PATH}"


@dataclass
class SignInFailed(Exception):
    """What went wrong, in words a person (or the admin they forward it to) can act on."""

    title: str
    advice: str
    status: int = 400
    detail: str = ""


@dataclass
class Claims:
    subject: str
    email: str
    email_verified: bool
    name: str
    given_name: str
    family_name: str
    preferred_username: str
    groups: list[str] | None
    id_token: str


def _groups(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, (str, int))]
    return None


def finish(request: HttpRequest) -> Claims:
    """The provider sent the person back: exchange the code, check the ID token, read who they are."""
    idp = client()
    try:
        issuer = str(idp.load_server_metadata().get("issuer", ""))
        if issuer.rstrip("/") != settings.HOOKBRIDGE_OIDC_ISSUER:
            raise SignInFailed(
                "The identity provider's discovery document names another issuer.",
                f"Your admin must set HOOKBRIDGE_OIDC_ISSUER to exactly {issuer}.",
                status=502,
            )
        # Authlib checks the issuer, but the audience only through `azp`: a token for another application that
        # names us as its authorized party would pass. Ours must be the audience (OIDC Core 3.1.3.7, point 3).
        options = {
            "iss": {"essential": True, "values": [issuer]},
            "aud": {"essential": True, "values": [settings.HOOKBRIDGE_OIDC_CLIENT_ID]},
        }
        token = idp.authorize_access_token(request, leeway=int(settings.HOOKBRIDGE_OIDC_LEEWAY), claims_options=options)
        claims = dict(token.get("userinfo") or {})
        if not claims:
            raise SignInFailed(
                "The identity provider sent no ID token.",
                "Check that the client asks for the openid scope (HOOKBRIDGE_OIDC_SCOPES).",
            )
        wanted = settings.HOOKBRIDGE_OIDC_GROUPS_CLAIM
        if wanted not in claims or "email" not in claims:
            # Many providers keep groups and e-mail to the userinfo endpoint unless told otherwise.
            extra = dict(idp.userinfo(token=token))
            if extra.get("sub") == claims.get("sub"):
                claims = {**extra, **claims} if wanted in claims else {**claims, **extra}
    except SignInFailed:
        raise
    except MismatchingStateError as error:
        raise SignInFailed(
            "This sign-in was already used, or was started in another browser.",
            "Start again from the sign-in page.",
            detail=str(error),
        ) from error
    except OAuthError as error:
        raise _from_oauth(error) from error
    except ClaimError as error:
        raise _from_claim(error) from error
    except JoseError as error:
        raise SignInFailed(
            "The identity provider's ID token did not pass its checks.",
            "Ask your admin to check the provider's signing keys and this server's HOOKBRIDGE_OIDC_ISSUER.",
            detail=str(error),
        ) from error
    except (requests.RequestException, ValueError) as error:
        logger.warning("Sign-in with %s failed: %s", settings.HOOKBRIDGE_OIDC_ISSUER, error)
        raise SignInFailed(
            f"Hook Bridge could not reach the identity provider at {settings.HOOKBRIDGE_OIDC_ISSUER}.",
            "Try again in a minute; if it keeps failing, tell your admin.",
            status=502,
            detail=str(error),
        ) from error
    return Claims(
        subject=str(claims.get("sub", "")),
        email=str(claims.get("email") or ""),
        email_verified=bool(claims.get("email_verified", False)),
        name=str(claims.get("name") or ""),
        given_name=str(claims.get("given_name") or ""),
        family_name=str(claims.get("family_name") or ""),
        preferred_username=str(claims.get("preferred_username") or ""),
        groups=_groups(claims.get(settings.HOOKBRIDGE_OIDC_GROUPS_CLAIM)),
        id_token=str(token.get("id_token", "")),
    )


def _from_oauth(error: OAuthError) -> SignInFailed:
    code, description = error.error or "", error.description or ""
    if code == "invalid_client" or "client authentication" in description.lower():
        return SignInFailed(
            "The identity provider refused this server's client credentials.",
            "Your admin must check HOOKBRIDGE_OIDC_CLIENT_ID and HOOKBRIDGE_OIDC_CLIENT_SECRET "
            "against the application registered at the provider.",
            status=502,
            detail=f"{code}: {description}",
        )
    if code in {"access_denied", "login_required", "consent_required", "interaction_required"}:
        return SignInFailed(
            "The identity provider did not sign you in.",
            "You may not be assigned to this application there: ask your admin.",
            status=403,
            detail=f"{code}: {description}",
        )
    if code == "invalid_grant":
        return SignInFailed(
            "The sign-in code was refused: it was used already or is too old.",
            "Start again from the sign-in page.",
            detail=f"{code}: {description}",
        )
    return SignInFailed(
        "The identity provider refused the sign-in.",
        "Start again; if it keeps failing, tell your admin.",
        detail=f"{code}: {description}".strip(": "),
    )


def _from_claim(error: ClaimError) -> SignInFailed:
    claim = "exp" if isinstance(error, ExpiredTokenError) else error.claim
    if claim in {"exp", "iat", "nbf"}:
        return SignInFailed(
            "The ID token's times do not fit this server's clock.",
            "This server's clock and the identity provider's differ by more than "
            f"{int(settings.HOOKBRIDGE_OIDC_LEEWAY)} seconds: your admin should set the clock "
            "right (NTP) or raise HOOKBRIDGE_OIDC_LEEWAY.",
            detail=str(error),
        )
    if claim == "aud":
        return SignInFailed(
            "The ID token was made for another application.",
            "Your admin must check HOOKBRIDGE_OIDC_CLIENT_ID.",
            detail=str(error),
        )
    if claim == "iss":
        return SignInFailed(
            "The ID token came from another issuer.", "Your admin must check HOOKBRIDGE_OIDC_ISSUER.", detail=str(error)
        )
    if claim == "nonce":
        return SignInFailed(
            "This sign-in's answer did not match the one this browser started.",
            "Start again from the sign-in page.",
            detail=str(error),
        )
    return SignInFailed(
        "The ID token did not pass its checks.", "Start again; if it keeps failing, tell your admin.", detail=str(error)
    )


def logout_url(id_token: str, after: str) -> str | None:
    """The provider's end-session address (RP-initiated logout) when it offers one."""
    if not configured():
        return None
    try:
        metadata = client().load_server_metadata()
    except (requests.RequestException, ValueError) as error:
        logger.warning("No logout at the identity provider: %s", error)
        return None
    if not metadata.get("end_session_endpoint"):
        return None
    result = client().create_logout_url(post_logout_redirect_uri=after, id_token_hint=id_token or None)
    return str(result["url"])
