"""The reviewers a ``gavel serve`` may admit: a name, a hashed token or password, an expiry and
a signing key of their own.

A token is made by ``gavel serve add-reviewer NAME`` and shown once; a password is chosen by
whoever admits the reviewer (``--password``). The server keeps either only as its scrypt hash
(salted, the same for both), so a copy of the accounts file does not let anyone in. Each
credential has a salt of its own, which also names it: a session remembers the salt it signed
in with, and ends when the reviewer's credential is replaced or removed. Each reviewer gets a
signing key kept beside the accounts (``keys/``): the sessions a reviewer opens sign with it,
never with the key of whoever started the server, so the review log says who decided.
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


MIN_PASSWORD = 12
"""The shortest password admitted: shorter ones fall to guessing, even through scrypt."""


class PasswordRefused(ValueError):
    """A password that would be too easy to guess."""


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    salt: str
    digest: str
    expires: str
    """ISO time after which the token or password no longer signs anyone in."""
    kind: str = "token"
    """``token`` (made by Gavel) or ``password`` (chosen by a person)."""


def accounts_dir(db: Path) -> Path:
    """Where a database's server keeps its accounts: ``<db>.serve/`` beside it."""
    return db.with_name(db.name + ".serve")


class Accounts:
    """The accounts file (``accounts.json``) and the reviewers' keys in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "accounts.json"
        self._read: tuple[tuple[int, int, int], dict[str, Account]] | None = None

    def load(self) -> dict[str, Account]:
        """The accounts as the file has them now (read again only when it changed: a server
        asks at every request whether a session's credential still stands)."""
        try:
            info = self.file.stat()
        except FileNotFoundError:
            return {}
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        if self._read is None or self._read[0] != stamp:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            self._read = (stamp, {name: Account(name, *fields) for name, fields in data.items()})
        return dict(self._read[1])

    def _save(self, accounts: dict[str, Account]) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        draft = self.file.with_name(f".accounts.{os.getpid()}.tmp")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(
                {a.name: [a.salt, a.digest, a.expires, a.kind] for a in accounts.values()},
                handle,
                indent=1,
                sort_keys=True,
            )
        os.replace(draft, self.file)

    def add(self, name: str, days: float = 30.0) -> str:
        """Admit ``name`` (again: a new token replaces the old one); returns the token, which
        is not kept anywhere."""
        token = secrets.token_urlsafe(24)
        self._admit(check_reviewer_name(name), token, days, "token")
        return token

    def add_password(self, name: str, password: str, days: float = 30.0) -> None:
        """Admit ``name`` with a password of their own (again: it replaces the old token or
        password); ``PasswordRefused`` for one too easy to guess."""
        name = check_reviewer_name(name)
        check_password(name, password)
        self._admit(name, password, days, "password")

    def _admit(self, name: str, secret: str, days: float, kind: str) -> None:
        salt = secrets.token_hex(16)
        expires = (datetime.now(UTC) + timedelta(days=days)).isoformat(timespec="seconds")
        accounts = self.load()
        accounts[name] = Account(name, salt, _digest(secret, salt), expires, kind)
        self._save(accounts)
        from store.reviewlog.identity import load_identity

        load_identity(name, self.key_path(name))  # the reviewer's signing key, made now

    def remove(self, name: str) -> bool:
        accounts = self.load()
        if accounts.pop(name, None) is None:
            return False
        self._save(accounts)
        return True

    def verify(self, name: str, token: str) -> bool:
        """Whether ``token`` (or password) admits ``name`` now."""
        return self.admit(name, token) is not None

    def admit(self, name: str, secret: str) -> str | None:
        """The credential (:meth:`credential`) that ``secret``, a token or a password, signs
        ``name`` in with now, or None. Costs the same scrypt whether the name is known or not,
        so the time taken tells nothing about which names exist."""
        account = self.load().get(name)
        salt = account.salt if account is not None else "0" * 32
        digest = _digest(secret, salt)
        if account is None or not hmac.compare_digest(digest, account.digest):
            return None
        if datetime.fromisoformat(account.expires) <= datetime.now(UTC):
            return None
        return account.salt

    def credential(self, name: str) -> str | None:
        """What names ``name``'s current token or password (its salt, new with each one);
        None once the reviewer is removed. A session signed in with another has lost it."""
        account = self.load().get(name)
        return None if account is None else account.salt

    def key_path(self, name: str) -> Path:
        """The reviewer's signing key file (named by a hash: any name makes a safe file)."""
        keys = self.folder / "keys"
        keys.mkdir(mode=0o700, parents=True, exist_ok=True)
        return keys / (hashlib.sha256(name.encode("utf-8")).hexdigest()[:24] + ".key")


def check_password(name: str, password: str) -> None:
    """Refuse a password shorter than :data:`MIN_PASSWORD` characters or equal to the name
    (the first thing anyone would try)."""
    if len(password) < MIN_PASSWORD:
        raise PasswordRefused(f"a password needs at least {MIN_PASSWORD} characters")
    if password.strip().casefold() == name.strip().casefold():
        raise PasswordRefused("a password may not be the reviewer's name")


def _digest(token: str, salt: str) -> str:
    return hashlib.scrypt(token.encode("utf-8"), salt=bytes.fromhex(salt), **_SCRYPT).hex()
