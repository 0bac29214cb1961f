"""This installation's signing key: created when it is first needed, kept beside the config file.

``$GAVEL_IDENTITY`` names the key file; otherwise ``identity.key`` in Gavel's config folder
(``$XDG_CONFIG_HOME/gavel``, i.e. ``~/.config/gavel``). The file holds the 32-byte Ed25519
secret in base64 and is created readable by its owner only; like ssh with a private key, a key
file that other users may read or write is refused (another local user could sign as you).
Losing it means new events sign with a new key, a new identity: your earlier events stay yours
in name, but can no longer be undone from here.

The key is made by the first write that signs an event, not by opening the workstation or by
a command that only reads.
"""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

from reviewer.errors import ConfigError
from reviewer.identity import Identity, new_secret


def identity_path() -> Path:
    explicit = os.environ.get("GAVEL_IDENTITY")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gavel" / "identity.key"


def load_identity(name: str, path: Path | None = None) -> Identity:
    """The reviewer ``name`` signing with this installation's key (made if there is none)."""
    file = path or identity_path()
    if not file.exists():
        try:
            _create(file)
        except OSError as exc:
            raise ConfigError(
                f"{file}: cannot create the signing key ({exc.strerror or exc}): set "
                "$GAVEL_IDENTITY to a file in a folder you may write"
            ) from None
    return _read(name, file)


def existing_identity(name: str, path: Path | None = None) -> Identity | None:
    """The installation's identity if its key exists; None (and no key made) if not: what
    reading needs, since nothing is signed yet without a key."""
    file = path or identity_path()
    return _read(name, file) if file.exists() else None


def _create(file: Path) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    secret = new_secret()
    # Two processes starting at once must not each write a different key, nor read one
    # half-written: the key is written whole under a private name, then linked into place
    # (a link never replaces an existing file; the loser reads the winner's key).
    draft = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(base64.b64encode(secret).decode("ascii") + "\n")
    try:
        os.link(draft, file)
    except FileExistsError:
        pass
    finally:
        draft.unlink(missing_ok=True)


def _read(name: str, file: Path) -> Identity:
    try:
        _check_private(file)
        secret = base64.b64decode(file.read_text(encoding="ascii").strip(), validate=True)
    except OSError as exc:
        raise ConfigError(
            f"{file}: cannot read the signing key ({exc.strerror or exc}); set "
            "$GAVEL_IDENTITY to your key file"
        ) from None
    except ValueError as exc:
        raise ConfigError(f"{file}: not a Gavel identity key ({exc})") from None
    if len(secret) != 32:
        raise ConfigError(f"{file}: not a Gavel identity key (expected 32 bytes)")
    return Identity(name, secret)


def _check_private(file: Path) -> None:
    """Refuse a key file that other users may read or write, as ssh does."""
    if os.name != "posix":
        return
    info = file.stat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{file}: the signing key is not a regular file")
    loose = stat.S_IMODE(info.st_mode) & 0o077
    if loose:
        raise ConfigError(
            f"{file}: the private signing key may be read or written by other users "
            f"(mode {stat.S_IMODE(info.st_mode):04o}), who could sign as you; it is not "
            f"used. Make it private: chmod 600 {file}"
        )
