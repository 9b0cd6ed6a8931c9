"""Client ID Metadata Documents: the library's SSRF-safe fetcher, and why a document could not be used.

django-oauth-toolkit treats a client whose document cannot be fetched as an unknown client, and says only
that. The fetcher here keeps the reason (which host, and what went wrong) for a minute, so the consent
page can tell the person (tokens.oauth_views.Authorize), and the admin's log has it too.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

logger = logging.getLogger(__name__)

KEPT_SECONDS = 60  # as long as the library waits before it tries a failed document again


def _key(client_id: str) -> str:
    return "hookbridge-client-document:" + hashlib.sha256(client_id.encode()).hexdigest()


def failure(client_id: str) -> str | None:
    """Why the document at `client_id` could not be used, lately; None when nothing failed."""
    found = cache.get(_key(client_id))
    return found if isinstance(found, str) else None


class ReportingFetcher:
    """The library's fetcher, keeping the reason when a document cannot be fetched or is not a client's."""

    def fetch_document(self, client_id: str) -> tuple[dict[str, Any], int]:
        fetched: tuple[dict[str, Any], int] = SafeMetadataFetcher().fetch(client_id)
        return fetched

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        try:
            return self.fetch_document(client_id)
        except CIMDError as exc:
            host = urlsplit(client_id).hostname or client_id[:100]
            reason = f"The client's metadata document at {host} could not be used: {exc}"
            logger.warning("%s", reason)
            cache.set(_key(client_id), reason, KEPT_SECONDS)
            raise
