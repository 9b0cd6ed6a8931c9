"""Agents of the same company (MCP's enterprise-managed authorization): an ID-JAG for an MCP token, no consent screen.

The company's identity provider (HOOKBRIDGE_OIDC_ISSUER) signs an Identity Assertion JWT Authorization Grant for a
person and an MCP client; the client presents it at our token endpoint with RFC 7523's jwt-bearer grant and its
own credentials, and gets an access token that acts as that person (tokens.oauth, as a consented grant does).
Checked here, as ext-auth's enterprise-managed-authorization section 5.1 says: the header's `typ`
(`oauth-id-jag+jwt`), the provider's signature, `iss`, `aud` (our authorization server), `resource` (our /mcp),
`client_id` (the client that authenticated), `exp`/`iat`, and `jti` once only. On with HOOKBRIDGE_ID_JAG.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.settings import oauth2_settings

from audit import chain
from core import acting
from identity import oidc
from identity.models import Identity, UsedAssertion
from projects.models import Membership, at_least
from tokens import oauth
from tokens import oauth_views as token_views
from tokens.models import AgentToken

logger = logging.getLogger(__name__)

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_JAG_TYPE = "oauth-id-jag+jwt"
MAX_LIFETIME = timedelta(minutes=10)  # an ID-JAG is short-lived; a longer one is refused rather than kept


class Refused(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


@csrf_exempt
def token(request: HttpRequest) -> HttpResponse:
    """The token endpoint: the jwt-bearer grant here, every other grant as tokens.oauth_views.Token serves it."""
    if request.method != "POST" or request.POST.get("grant_type") != JWT_BEARER:
        response: HttpResponse = token_views.Token.as_view()(request)
        return response
    if not (settings.HOOKBRIDGE_ID_JAG and oidc.configured()):
        return _error(
            Refused("unsupported_grant_type", "This server takes no identity assertions (HOOKBRIDGE_ID_JAG).")
        )
    try:
        return _exchange(request)
    except Refused as refused:
        logger.info("An ID-JAG was refused: %s", refused.description)
        return _error(refused)


def _error(refused: Refused) -> HttpResponse:
    response = JsonResponse({"error": refused.error, "error_description": refused.description}, status=refused.status)
    response["Cache-Control"] = "no-store"
    return response


def _client(request: HttpRequest) -> Any:
    """The MCP client, by its own credentials (HTTP Basic or the body): a confidential client only."""
    client_id, secret = request.POST.get("client_id", ""), request.POST.get("client_secret", "")
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "basic" and encoded:
        try:
            client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        except (ValueError, UnicodeDecodeError) as error:
            raise Refused("invalid_client", "The Basic credentials are not base64 of id:secret.", 401) from error
    application = get_application_model().objects.filter(client_id=client_id).first() if client_id else None
    if application is None or not secret or application.client_type != "confidential":
        raise Refused("invalid_client", "client_id: no confidential client by that id with that secret.", 401)
    stored = application.client_secret
    good = check_password(secret, stored) if application.hash_client_secret else secret == stored
    if not good:
        raise Refused("invalid_client", "client_id: no confidential client by that id with that secret.", 401)
    return application


def _claims(request: HttpRequest, assertion: str, client_id: str, resource: str) -> dict[str, Any]:
    if not assertion:
        raise Refused("invalid_request", "assertion: missing (the ID-JAG).")
    provider = oidc.client()
    try:
        keys = KeySet.import_key_set(provider.fetch_jwk_set())
        try:
            decoded = jwt.decode(assertion, keys)
        except JoseError:
            keys = KeySet.import_key_set(provider.fetch_jwk_set(force=True))  # the provider rotated its keys
            decoded = jwt.decode(assertion, keys)
    except JoseError as error:
        raise Refused(
            "invalid_grant", f"assertion: not signed by {settings.HOOKBRIDGE_OIDC_ISSUER} ({error})."
        ) from error
    except ValueError as error:
        raise Refused("invalid_grant", f"assertion: not a JWT ({error}).") from error
    if str(decoded.header.get("typ", "")).lower() != ID_JAG_TYPE:
        raise Refused("invalid_grant", f"assertion: its typ must be {ID_JAG_TYPE}, not {decoded.header.get('typ')!r}.")
    ours = oauth2_settings.oauth2_authorization_server_issuer(request)
    registry = JWTClaimsRegistry(
        leeway=int(settings.HOOKBRIDGE_OIDC_LEEWAY),
        iss={"essential": True, "value": settings.HOOKBRIDGE_OIDC_ISSUER},
        aud={"essential": True, "values": [ours, ours.rstrip("/"), ours.rstrip("/") + "/"]},
        sub={"essential": True},
        jti={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
    )
    try:
        registry.validate(decoded.claims)
    except JoseError as error:
        raise Refused("invalid_grant", f"assertion: {error.description or error}.") from error
    claims = dict(decoded.claims)
    if claims.get("resource") != resource:
        raise Refused("invalid_grant", f"assertion: its resource must be {resource}, not {claims.get('resource')!r}.")
    if claims.get("client_id") != client_id:
        raise Refused("invalid_grant", "assertion: it was issued to another client (client_id).")
    if int(claims["exp"]) - int(claims["iat"]) > MAX_LIFETIME.total_seconds():
        raise Refused("invalid_grant", "assertion: it lives longer than ten minutes; ID-JAGs are short-lived.")
    return claims


def _exchange(request: HttpRequest) -> HttpResponse:
    application = _client(request)
    resource = oauth.mcp_resource(token_views._base(request))
    claims = _claims(request, request.POST.get("assertion", ""), str(application.client_id), resource)
    issuer, subject = settings.HOOKBRIDGE_OIDC_ISSUER, str(claims["sub"])
    identity = (
        Identity.objects.select_related("user")
        .filter(removed_at__isnull=True)
        .filter(Q(issuer=issuer, subject=subject) | Q(provisioned=True, subject="", external_id=subject))
        .first()
    )
    person = identity.user if identity is not None else None
    if person is None or not person.is_active:
        raise Refused("invalid_grant", "sub: nobody here by that subject (they sign in once, or SCIM makes them).")
    projects = [
        m.project
        for m in Membership.objects.filter(user=person).select_related("project").order_by("project__name")
        if at_least(m.role, settings.HOOKBRIDGE_TOKEN_ROLE)
    ]
    if not projects and not person.is_superuser:
        raise Refused("invalid_grant", f"sub: {person.get_username()} may not make agent tokens in any project.")
    expires_at = timezone.now() + timedelta(seconds=int(claims["exp"]) - int(claims["iat"]) + 60)
    raw = secrets.token_urlsafe(32)
    lifetime = int(oauth2_settings.ACCESS_TOKEN_EXPIRE_SECONDS)
    # Atomic: the assertion is spent, the agent made and the access token issued together, or none of them.
    try:
        with transaction.atomic():
            UsedAssertion.objects.filter(expires_at__lt=timezone.now()).delete()
            digest = hashlib.sha256(f"{issuer} {claims['jti']}".encode()).hexdigest()
            UsedAssertion.objects.create(digest=digest, expires_at=expires_at)
            agent = AgentToken.for_oauth_grant(person, application, projects[0] if projects else None)
            get_access_token_model().objects.create(
                user=person,
                application=application,
                token=raw,
                scope=oauth.SCOPE,
                resource=[resource],
                expires=timezone.now() + timedelta(seconds=lifetime),
            )
            chain.record(
                "oauth.assertion_accepted",
                acting.person(person),
                project=agent.project,
                target=agent.audit_target(),
                target_id=agent.pk,
                details={"client_id": str(application.client_id)[:300], "jti": str(claims["jti"])[:200]},
            )
    except IntegrityError as error:
        raise Refused("invalid_grant", "assertion: this ID-JAG was used already (jti).") from error
    body = {"access_token": raw, "token_type": "Bearer", "expires_in": lifetime, "scope": oauth.SCOPE}
    response = HttpResponse(json.dumps(body), content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response
