"""The Ed25519 key that signs checkpoints: HOOKBRIDGE_AUDIT_SIGNING_KEY, else generated once into the data folder
(as the secret key is), so an outsider holding the public key checks a checkpoint, and an export, alone."""

from __future__ import annotations

import base64
import binascii
import hashlib
from datetime import datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from audit import runtime
from core import local_secret


def _raw(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())


def load() -> Ed25519PrivateKey:
    given = settings.HOOKBRIDGE_AUDIT_SIGNING_KEY.strip()
    if not given:
        path = settings.HOOKBRIDGE_AUDIT_SIGNING_KEY_FILE
        if local_secret.read(path) is None:
            # Of two processes starting at once one writes, and both then use what is in the file.
            local_secret.save(path, base64.b64encode(_raw(Ed25519PrivateKey.generate())).decode())
        given = local_secret.read(path) or ""
    try:
        raw = base64.b64decode(given, validate=True)
        return Ed25519PrivateKey.from_private_bytes(raw)
    except (binascii.Error, ValueError) as exc:
        raise ImproperlyConfigured(
            "HOOKBRIDGE_AUDIT_SIGNING_KEY: must be an Ed25519 private key, its 32 bytes in base64 "
            "(python -m audit.signing prints a new one)"
        ) from exc


def private_key() -> Ed25519PrivateKey:
    if runtime.signing_key is None:
        runtime.signing_key = load()
    key: Ed25519PrivateKey = runtime.signing_key
    return key


def public_key_text(key: Ed25519PublicKey | None = None) -> str:
    """The public key as people publish it: its 32 bytes in base64."""
    key = key or private_key().public_key()
    return base64.b64encode(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)).decode()


def trusted_keys() -> list[str]:
    """The keys a stored checkpoint may be signed with: this server's, and those it was signed with before a
    rotation (HOOKBRIDGE_AUDIT_PREVIOUS_KEYS)."""
    return [public_key_text(), *settings.HOOKBRIDGE_AUDIT_PREVIOUS_KEYS]


def key_id(public: str) -> str:
    """A short fingerprint of a public key (base64): which key signed a checkpoint."""
    try:
        return hashlib.sha256(base64.b64decode(public, validate=True)).hexdigest()[:16]
    except binascii.Error:
        return "not-a-key"


def statement(seq: int, chain_hash: str, at: datetime) -> bytes:
    """What a checkpoint's signature covers: the chain's head and when."""
    return f"hookbridge-audit-checkpoint\n{seq}\n{chain_hash}\n{at.isoformat(timespec='microseconds')}".encode()


def sign(seq: int, chain_hash: str, at: datetime) -> str:
    return base64.b64encode(private_key().sign(statement(seq, chain_hash, at))).decode()


def signed_by(public: str, signature: str, seq: int, chain_hash: str, at: datetime) -> bool:
    """Whether `signature` is the key's over the checkpoint (any malformed part: False)."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public, validate=True))
        key.verify(base64.b64decode(signature, validate=True), statement(seq, chain_hash, at))
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


if __name__ == "__main__":
    import sys

    sys.stdout.write(base64.b64encode(_raw(Ed25519PrivateKey.generate())).decode() + "\n")
