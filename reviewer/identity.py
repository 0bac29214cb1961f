"""Who wrote a review event: a reviewer's name plus a signing key of their installation.

A name alone cannot be trusted once logs travel between machines: anyone can write an event
that says ``"reviewer": "ana"``. Each installation therefore holds an Ed25519 key; every event it
writes carries the public key and a signature over the event's canonical content, and a merge
refuses an event whose signature does not verify. An *identity* is (name, key): two people who
both log in as ``root`` are two identities, and an event can only undo or supersede events of
its own identity. Events written before signing existed carry no key; they stand for their name
only, and the one signed identity of the same name may take them over (see
:mod:`store.reviewlog.events`).

``cryptography`` is imported on first use: most commands never sign or verify anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SIGNED_FIELDS = (
    "uuid",
    "target",
    "reviewer",
    "action",
    "value",
    "rationale",
    "reason",
    "created_at",
    "supersedes",
    "run",
    "key",
)
"""What a signature covers, in this order (everything an event says but the signature)."""


def signing_payload(event: Mapping[str, Any]) -> bytes:
    """The canonical bytes a signature is made over: the signed fields as sorted-key JSON."""
    return json.dumps(
        {name: event.get(name) for name in SIGNED_FIELDS},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    ).encode("utf-8")


def key_id(public_key: str | None) -> str:
    """A short, stable name of a public key (8 hex digits of its sha256); '' for no key."""
    if not public_key:
        return ""
    return hashlib.sha256(public_key.encode("ascii")).hexdigest()[:8]


def label(name: str, public_key: str | None) -> str:
    """How an identity is written where names alone could collide: ``ana#1f2e3d4c``."""
    return f"{name}#{key_id(public_key)}" if public_key else name


@dataclass(frozen=True, slots=True)
class Identity:
    """A reviewer name with the installation's private signing key (raw 32 bytes)."""

    name: str
    secret: bytes

    @property
    def public_key(self) -> str:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        # The *_raw methods spare importing the serialization module (start-up time).
        raw = Ed25519PrivateKey.from_private_bytes(self.secret).public_key().public_bytes_raw()
        return base64.b64encode(raw).decode("ascii")

    def sign(self, event: Mapping[str, Any]) -> str:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        signature = Ed25519PrivateKey.from_private_bytes(self.secret).sign(signing_payload(event))
        return base64.b64encode(signature).decode("ascii")


def new_secret() -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes_raw()


def verify(event: Mapping[str, Any]) -> bool:
    """Whether an event's signature is its key's signature over its content."""
    key, signature = event.get("key"), event.get("sig")
    if not isinstance(key, str) or not isinstance(signature, str):
        return False
    from cryptography.exceptions import InvalidSignature

    try:
        _public_key(key).verify(base64.b64decode(signature, validate=True), signing_payload(event))
    except (InvalidSignature, ValueError):
        return False
    return True


@lru_cache(maxsize=1024)
def _public_key(key: str) -> Any:
    """A reviewer's public key, decoded once: a merge verifies thousands of events by a few
    reviewers."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    return Ed25519PublicKey.from_public_bytes(base64.b64decode(key, validate=True))
