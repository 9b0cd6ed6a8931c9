"""The authorization server's pages and documents, as django-oauth-toolkit serves them, with what is ours.

- The protected resource's metadata (RFC 9728) names this server's /mcp, as the client reached it.
- The consent page says which client asks for what, as whom; it may send the browser on to the
  client's own redirect address (often http://localhost:<port>/callback), so its form-action
  allows that one origin, and every other page keeps 'self'.
- A client may ask for a token for this server's /mcp only (RFC 8707 `invalid_target` otherwise).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from oauth2_provider import views as oauth_views
from oauth2_provider.models import get_application_model

from projects import access
from projects.models import Project
from tokens import oauth
from tokens.models import AgentToken

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
            "error": "invalid_request",
            "description": "redirect_uri: http only to this computer (127.0.0.1, localhost, [::1]); https elsewhere.",
        }
    return None


def _preselected(projects: list[Project]) -> Project | None:
    """The default project, where the person may work in it; else their first."""
    return next((project for project in projects if project.is_default), projects[0] if projects else None)


class Authorize(oauth_views.AuthorizationView):
    template_name = "tokens/authorize.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and (error := _refused(request)):
            return render(request, self.template_name, {"error": error}, status=400)
        response: HttpResponse = super().dispatch(request, *args, **kwargs)
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
