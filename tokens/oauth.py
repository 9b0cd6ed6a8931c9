"""Signing in the MCP way: the authorization server's access tokens, as the agents the rest of Hook Bridge knows.

django-oauth-toolkit issues and stores the tokens (hashed at rest), checks PKCE, registers
clients and revokes. What is ours: which resource a token must name (this server's /mcp, as the
client reached it: RFC 8707, so a token minted for another server is refused here), and which
agent a valid token acts as (`AgentToken.for_oauth_grant`: "alice's Claude Code").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.conf import settings
from oauth2_provider.models import get_access_token_model

from tokens.models import AgentToken

SCOPE = "mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"


def base_url(scheme: str, host: str) -> str:
    return f"{scheme}://{host}"


def mcp_resource(base: str) -> str:
    """The resource indicator of this server's MCP endpoint, as a client reaching `base` names it."""
    return base + MCP_PATH


def resource_metadata_url(base: str, path: str = MCP_PATH) -> str:
    """RFC 9728's path-component form: the metadata of the resource `<base><path>` (/mcp, /mcp/clifford)."""
    return base + METADATA_PATH + path


def challenge(base: str, path: str = MCP_PATH, error: str = "") -> str:
    """The WWW-Authenticate value a 401 from /mcp carries: where to start signing in."""
    parts = [f'resource_metadata="{resource_metadata_url(base, path)}"', f'scope="{SCOPE}"']
    if error:
        parts.insert(0, f'error="{error}"')
    return "Bearer " + ", ".join(parts)


def scheme_and_host(scheme: str, headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, str]:
    """The scheme and host a request reached us at (behind a trusted proxy, what the proxy says)."""
    found = dict(headers)
    host = found.get(b"host", b"").decode("latin-1")
    if settings.HOOKBRIDGE_TRUST_PROXY_HEADERS:
        scheme = found.get(b"x-forwarded-proto", scheme.encode()).decode("latin-1").split(",")[0].strip() or scheme
    return scheme, host


def authenticate(raw: str, resource: str) -> AgentToken | None:
    """The agent an access token acts as, if it is live, has the `mcp` scope and names `resource`; else None."""
    access = (
        get_access_token_model()
        .objects.select_related("user", "application")
        .filter(token_checksum=hashlib.sha256(raw.encode()).hexdigest())
        .first()
    )
    if access is None or access.user is None or access.application is None:
        return None
    if not access.user.is_active or access.is_expired() or not access.allow_scopes([SCOPE]):
        return None
    # A token without a resource would be good anywhere: MCP clients must name the server (RFC 8707).
    if not access.resource or not access.allows_audience(resource):
        return None
    agent = AgentToken.of_oauth_grant(access.user, access.application, access.created)
    if agent is None:
        return None  # its agent was revoked, expired or deleted: never made again here, elsewhere (issue 37)
    agent.mark_used()
    return agent
