"""What this process keeps in memory for the audit record: its signing key, read once."""

from __future__ import annotations

from typing import Any

# The Ed25519 private key checkpoints are signed with (audit.signing.private_key).
signing_key: Any = None
