"""This installation's signing key: created on first use, kept beside the config file.

``$GAVEL_IDENTITY`` names the key file; otherwise ``identity.key`` in Gavel's config folder
(``$XDG_CONFIG_HOME/gavel``, i.e. ``~/.config/gavel``). The file holds the 32-byte Ed25519
secret in base64 and is created readable by its owner only. Losing it means new events sign
with a new key, a new identity: your earlier events stay yours in name, but can no longer be
undone from here.
"""

from __future__ import annotations

import base64
import os
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
    try:
        secret = base64.b64decode(file.read_text(encoding="ascii").strip(), validate=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: not a Gavel identity key ({exc})") from None
    if len(secret) != 32:
        raise ConfigError(f"{file}: not a Gavel identity key (expected 32 bytes)")
    return Identity(name, secret)
