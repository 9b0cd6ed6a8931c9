"""The authorization server's pages and documents, as django-oauth-toolkit serves them, with what is ours.

- The protected resource's metadata (RFC 9728) names this server's /mcp, as the client reached it.
- The consent page says which client asks for what, as whom; it may send the browser on to the
  client's own redirect address (often http://localhost:<port>/callback), so its form-action
  allows that one origin, and every other page keeps 'self'.
- A client may ask for a token for this server's /mcp only (RFC 8707 `invalid_target` otherwise).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from oauth2_provider import views as oauth_views
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from projects import access
from projects.models import Project
from tokens import client_documents, oauth
from tokens.auth import client_address
from tokens.models import AgentToken, OAuthRegistration, UsedAuthorizationCode

logger = logging.getLogger(__name__)

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _base(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


class ProtectedResourceMetadata(oauth_views.OAuthProtectedResourceMetadataView):
    def get_resource(self, request: HttpRequest) -> str:
        path = "/" + self.kwargs.get("resource_path", "mcp").strip("/")
        if path != oauth.MCP_PATH and not path.startswith(oauth.MCP_PATH + "/"):
            raise Http404("Only /mcp is a protected resource here.")
        resource: str = _base(request) + path
        return resource

    def get_scopes_supported(self) -> list[str]:
        return [oauth.SCOPE]


def _foreign_resources(request: HttpRequest, requested: list[str]) -> list[str]:
    mine = oauth.mcp_resource(_base(request))
    return [r for r in requested if r.rstrip("/") != mine and not r.startswith(mine + "/")]


def _refused(request: HttpRequest) -> dict[str, str] | None:
    """What this server refuses before the library looks: tokens for other resources, PKCE other than S256."""
    sent = request.POST if request.method == "POST" else request.GET
    requested = request.GET.getlist("resource") + request.POST.get("resource", "").split()
    if foreign := _foreign_resources(request, requested):
        mine = oauth.mcp_resource(_base(request))
        return {
            "error": "invalid_target",
            "description": f"This server issues tokens for {mine} only, not {foreign[0][:200]}.",
        }
    method = sent.get("code_challenge_method", "")
    if method and method != "S256":
        return {"error": "invalid_request", "description": f"code_challenge_method must be S256, not {method[:40]}."}
    redirect = urlsplit(sent.get("redirect_uri", ""))
    if redirect.scheme == "http" and redirect.hostname not in LOOPBACK:
        return {
            "error": "invalid_redirect",  # never sent to that address: shown on our own page
            "description": "redirect_uri: http only to this computer (127.0.0.1, localhost, [::1]); https elsewhere.",
        }
    return None


def _preselected(projects: list[Project]) -> Project | None:
    """The default project, where the person may work in it; else their first."""
    return next((project for project in projects if project.is_default), projects[0] if projects else None)


def _valid_redirect(request: HttpRequest) -> str | None:
    """The redirect_uri the request names, when it is one its (known) client registered; else None."""
    sent = request.POST if request.method == "POST" else request.GET
    redirect_uri = sent.get("redirect_uri", "")
    client = get_application_model().objects.filter(client_id=sent.get("client_id", "")).first()
    if not redirect_uri or client is None or not client.redirect_uri_allowed(redirect_uri):
        return None
    return redirect_uri


def _error_redirect(request: HttpRequest, redirect_uri: str, error: dict[str, str]) -> HttpResponse:
    """An authorization error sent back to the client (RFC 6749 §4.1.2.1), with its state and our issuer."""
    sent = request.POST if request.method == "POST" else request.GET
    params = {"error": error["error"], "error_description": error["description"], "iss": _base(request)}
    if sent.get("state"):
        params["state"] = sent["state"]
    parts = urlsplit(redirect_uri)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    response = HttpResponse(status=302)
    response["Location"] = urlunsplit(parts._replace(query=query))
    return response


def _client_document_problem(request: HttpRequest) -> dict[str, str] | None:
    """For a client named by its metadata document's address that could not be used: what to tell the person."""
    sent = request.POST if request.method == "POST" else request.GET
    client_id = sent.get("client_id", "")
    if not client_id.startswith("https://") or get_application_model().objects.filter(client_id=client_id).exists():
        return None
    if not settings.OAUTH2_PROVIDER.get("CIMD_ENABLED"):
        host = urlsplit(client_id).hostname or client_id[:100]
        description = (
            f"The client names itself by a metadata document at {host}, and this server does not fetch client "
            "documents (HOOKBRIDGE_OAUTH_CLIENT_DOCUMENTS=0): register the client instead, or ask an admin."
        )
        return {"error": "invalid_client", "description": description}
    reason = client_documents.failure(client_id)
    if not reason:
        return None
    host = urlsplit(client_id).hostname or client_id[:100]
    # The client keeps its id, so "start again" fails the same way: say what does work (issue 55, point 13).
    return {
        "error": "invalid_client",
        "description": reason,
        "you": (
            "Starting again from the agent fails the same way while its document cannot be fetched. Connect the "
            "agent with a token instead: make one on the Agents page and give it to the agent as its "
            "Authorization: Bearer header. Or ask the client's maker to publish the document where this server can "
            "reach it."
        ),
        "admin": (
            f"An admin of this server can let it reach {host} over https, or register the client by hand in the "
            "admin (Applications) with this client id; a server that must not fetch documents sets "
            "HOOKBRIDGE_OAUTH_CLIENT_DOCUMENTS=0, and its clients register instead."
        ),
    }


class Authorize(oauth_views.AuthorizationView):
    template_name = "tokens/authorize.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if "approval_prompt" in request.GET:
            # Every grant is a person's deliberate act on the consent page: the client may not ask to skip it.
            forced = request.GET.copy()
            forced.pop("approval_prompt")
            request.GET = forced  # type: ignore[assignment]  # a copy, made mutable on purpose
        if request.user.is_authenticated and (error := _refused(request)):
            redirect_uri = _valid_redirect(request)
            if redirect_uri is not None and error["error"] != "invalid_redirect":
                return _error_redirect(request, redirect_uri, error)
            return render(request, self.template_name, {"error": error}, status=400)
        response: HttpResponse = super().dispatch(request, *args, **kwargs)
        if response.status_code >= 400 and (said := _client_document_problem(request)):
            return render(request, self.template_name, {"error": said}, status=400)
        redirect_uri = request.GET.get("redirect_uri") or request.POST.get("redirect_uri") or ""
        parts = urlsplit(redirect_uri)
        if parts.scheme in ("http", "https") and parts.netloc:
            # The consent form's POST answers with a redirect there; CSP's form-action covers redirects.
            response._csp_update = {"form-action": [f"{parts.scheme}://{parts.netloc}"]}  # type: ignore[attr-defined]
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context["resource"] = oauth.mcp_resource(_base(self.request))
        projects = list(access.projects_with(self.request.user, settings.HOOKBRIDGE_TOKEN_ROLE))
        context["projects"] = projects
        context["chosen_project"] = _preselected(projects)
        context["token_role"] = settings.HOOKBRIDGE_TOKEN_ROLE
        return context

    def form_valid(self, form: Any) -> HttpResponse:
        """Allowed: the client's agent works in the project chosen (issue 31), then the library issues the code."""
        if form.cleaned_data.get("allow"):
            allowed = access.projects_with(self.request.user, settings.HOOKBRIDGE_TOKEN_ROLE)
            chosen = self.request.POST.get("project")
            if chosen is None:  # a form without the choice (the page always sends it): what it preselects
                project = _preselected(list(allowed))
            else:
                project = allowed.filter(pk=int(chosen)).first() if chosen.isdigit() else None
            client = get_application_model().objects.filter(client_id=form.cleaned_data.get("client_id")).first()
            if project is None or client is None:
                form.add_error(None, "project: choose one of your projects for this agent to work in.")
                response: HttpResponse = self.form_invalid(form)
                response.status_code = 400
                return response
            AgentToken.for_oauth_grant(self.request.user, client, project)
        allowed_response: HttpResponse = super().form_valid(form)
        return allowed_response


def _checksum(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _json_error(error: str, description: str, status: int = 400, **headers: str) -> HttpResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


class Token(oauth_views.TokenView):
    """The token endpoint, as the library serves it, with two refusals of ours first.

    - A foreign `resource` is `invalid_target` (RFC 8707), whatever the authorization request named.
    - A code used a second time revokes every token the first use issued, and those refreshed from them
      (RFC 6749 §4.1.2, RFC 9700 §4.5.3): a replayed code is a sign it leaked.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        requested = request.POST.getlist("resource")
        if foreign := _foreign_resources(request, [r for value in requested for r in value.split()]):
            mine = oauth.mcp_resource(_base(request))
            return _json_error("invalid_target", f"This server issues tokens for {mine} only, not {foreign[0][:200]}.")
        exchanging = request.POST.get("grant_type") == "authorization_code"
        code = request.POST.get("code", "")
        if exchanging and code:
            used = UsedAuthorizationCode.objects.filter(code_checksum=_checksum(code)).first()
            if used is not None:
                revoke_what_it_issued(used)
                logger.warning("An authorization code was used twice: what it issued is revoked")
                return _json_error(
                    "invalid_grant", "This authorization code was used already: every token it issued is revoked."
                )
        response: HttpResponse = super().post(request, *args, **kwargs)
        if exchanging and code and response.status_code != 200:
            # A failed exchange (a wrong verifier, redirect address or client) burns the code: who holds it without
            # its verifier must not get to try again, nor may its own client after someone else tried it.
            burned, _ = get_grant_model().objects.filter(code=code).delete()
            if burned:
                logger.warning("A failed exchange burned its authorization code (%s)", response.status_code)
        if exchanging and code and response.status_code == 200:
            issued = json.loads(response.content)
            family = (
                get_refresh_token_model()
                .objects.filter(token_checksum=_checksum(str(issued.get("refresh_token", ""))))
                .values_list("token_family", flat=True)
                .first()
            )
            UsedAuthorizationCode.objects.filter(used_at__lt=timezone.now() - UsedAuthorizationCode.KEPT).delete()
            UsedAuthorizationCode.objects.get_or_create(
                code_checksum=_checksum(code),
                defaults={"token_family": family, "access_checksum": _checksum(str(issued.get("access_token", "")))},
            )
        return response


def revoke_what_it_issued(used: UsedAuthorizationCode) -> None:
    # All at once: a client left with one live token of the family would go on as if nothing happened.
    with transaction.atomic():
        if used.token_family is not None:
            get_refresh_token_model().revoke_family(used.token_family)
        for access in get_access_token_model().objects.filter(token_checksum=used.access_checksum):
            access.revoke()


# What registration serves: a person's consent, then refreshes. No machine grants, no device flow.
SERVED_GRANTS = {"authorization_code", "refresh_token"}


class Register(oauth_views.DynamicClientRegistrationView):
    """RFC 7591 registration, as the library does it, limited per address, for the grants served here only,
    and answering with what was registered (scope, application_type, client_id_issued_at too)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        address = client_address(request) or "unknown"
        limit = settings.HOOKBRIDGE_OAUTH_REGISTRATIONS_PER_HOUR
        window = timezone.now() - timedelta(hours=1)
        recent = OAuthRegistration.objects.filter(address=address, created_at__gte=window)
        if recent.count() >= limit:
            oldest = recent.order_by("created_at").values_list("created_at", flat=True).first() or timezone.now()
            retry = max(1, int((oldest - window).total_seconds()) + 1)
            return _json_error(
                "too_many_requests",
                f"{limit} clients were registered from this address in the last hour, the most allowed "
                "(HOOKBRIDGE_OAUTH_REGISTRATIONS_PER_HOUR)",
                status=429,
                Retry_After=str(retry),
            )
        try:
            metadata = json.loads(request.body or b"{}")
        except ValueError:
            metadata = None
        if isinstance(metadata, dict):
            grants = metadata.get("grant_types", ["authorization_code"])
            if isinstance(grants, list) and (others := [g for g in grants if g not in SERVED_GRANTS]):
                return _json_error(
                    "invalid_client_metadata",
                    f"grant_types: {str(others[0])[:60]!r} is not served here; register authorization_code "
                    "(and refresh_token)",
                )
            responses = metadata.get("response_types", ["code"])
            if isinstance(responses, list) and (others := [r for r in responses if r != "code"]):
                return _json_error(
                    "invalid_client_metadata", f"response_types: {str(others[0])[:60]!r} is not served; only code"
                )
        response: HttpResponse = super().post(request, *args, **kwargs)
        if response.status_code != 201 or not isinstance(metadata, dict):
            return response
        registered = json.loads(response.content)
        client = get_application_model().objects.filter(client_id=registered.get("client_id")).first()
        OAuthRegistration.objects.create(address=address, client_id=str(registered.get("client_id", "")))
        registered["scope"] = oauth.SCOPE
        registered["application_type"] = metadata.get("application_type") or "native"
        if client is not None:
            registered["client_id_issued_at"] = int(client.created.timestamp())
        answered = JsonResponse(registered, status=201)
        answered["Cache-Control"] = "no-store"
        return answered
