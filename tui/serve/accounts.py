"""The reviewers a ``gavel serve`` may admit: a name, a hashed token, an expiry and a signing
key of their own.

A token is made by ``gavel serve add-reviewer NAME`` and shown once; the server keeps only its
scrypt hash (salted), so a copy of the accounts file does not let anyone in. Each reviewer
gets a signing key kept beside the accounts (``keys/``): the sessions a reviewer opens sign with
it, never with the key of whoever started the server, so the review log says who decided.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from reviewer.assignment import check_reviewer_name

_SCRYPT = {"n": 1 << 14, "r": 8, "p": 1, "dklen": 32}
"""scrypt's cost: about as much memory and time per login as interactive logins want."""


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    salt: str
    digest: str
    expires: str
    """ISO time after which the token no longer admits anyone."""


def accounts_dir(db: Path) -> Path:
    """Where a database's server keeps its accounts: ``<db>.serve/`` beside it."""
    return db.with_name(db.name + ".serve")


class Accounts:
    """The accounts file (``accounts.json``) and the reviewers' keys in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "accounts.json"

    def load(self) -> dict[str, Account]:
        if not self.file.is_file():
            return {}
        data = json.loads(self.file.read_text(encoding="utf-8"))
        return {name: Account(name, *fields) for name, fields in data.items()}

    def _save(self, accounts: dict[str, Account]) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        draft = self.file.with_name(f".accounts.{os.getpid()}.tmp")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(
                {a.name: [a.salt, a.digest, a.expires] for a in accounts.values()},
                handle,
                indent=1,
                sort_keys=True,
            )
        os.replace(draft, self.file)

    def add(self, name: str, days: float = 30.0) -> str:
        """Admit ``name`` (again: a new token replaces the old one); returns the token, which
        is not kept anywhere."""
        name = check_reviewer_name(name)
        token = secrets.token_urlsafe(24)
        salt = secrets.token_hex(16)
        expires = (datetime.now(UTC) + timedelta(days=days)).isoformat(timespec="seconds")
        accounts = self.load()
        accounts[name] = Account(name, salt, _digest(token, salt), expires)
        self._save(accounts)
        from store.reviewlog.identity import load_identity

        load_identity(name, self.key_path(name))  # the reviewer's signing key, made now
        return token

    def remove(self, name: str) -> bool:
        accounts = self.load()
        if accounts.pop(name, None) is None:
            return False
        self._save(accounts)
        return True

    def verify(self, name: str, token: str) -> bool:
        """Whether ``token`` admits ``name`` now. Costs the same scrypt whether the name is
        known or not, so the time taken tells nothing about which names exist."""
        account = self.load().get(name)
        salt = account.salt if account is not None else "0" * 32
        digest = _digest(token, salt)
        if account is None or not hmac.compare_digest(digest, account.digest):
            return False
        return datetime.fromisoformat(account.expires) > datetime.now(UTC)

    def key_path(self, name: str) -> Path:
        """The reviewer's signing key file (named by a hash: any name makes a safe file)."""
        keys = self.folder / "keys"
        keys.mkdir(mode=0o700, parents=True, exist_ok=True)
        return keys / (hashlib.sha256(name.encode("utf-8")).hexdigest()[:24] + ".key")


def _digest(token: str, salt: str) -> str:
    return hashlib.scrypt(token.encode("utf-8"), salt=bytes.fromhex(salt), **_SCRYPT).hex()
