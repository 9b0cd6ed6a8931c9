"""What the identity app keeps in a server process's memory (core.runtime says why each app keeps its own).

The OIDC client, made on first use from the settings it was made with: Authlib caches the provider's discovery
document and keys in it, so a sign-in costs no discovery round trip. Tests that change the settings get a new one.
"""

from __future__ import annotations

from typing import Any

# (settings it was made from, the Authlib client) — written and read by identity.oidc.client().
oidc_client: tuple[tuple[str, ...], Any] | None = None
