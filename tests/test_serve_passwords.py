"""``gavel serve`` with passwords beside tokens, and credentials that can be replaced or
withdrawn: a reset or removal ends the reviewer's signed-in sessions and open workstations at
once. Checked over HTTP against a real server, as tests/test_serve.py does."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path

import pytest

from tests.test_serve import get, start_server, stop
from tui.cli import main
from tui.serve.accounts import Accounts, PasswordRefused, accounts_dir
from tui.serve.client import ScriptedSession, SignInRefused

PASSWORD = "correct horse battery"


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def _sign_in(base: str, name: str, secret: str) -> str | None:
    """The session cookie a sign-in gets, or None when refused."""
    status, _, headers = get(base + "/login", f"name={name}&token={secret}".encode())
    if status != 303:
        return None
    cookie = headers["Set-Cookie"]
    return str(cookie.split(";")[0])


def _page(base: str, cookie: str) -> str:
    status, body, _ = get(base + "/", headers={"Cookie": cookie})
    assert status == 200
    return str(body)


# -- accounts and the command line ------------------------------------------------------------


def test_a_password_is_kept_hashed_like_a_token_and_weak_ones_are_refused(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "acc")
    accounts.add_password("maria", PASSWORD)
    stored = (tmp_path / "acc" / "accounts.json").read_text()
    assert PASSWORD not in stored
    salt, digest, _, kind = json.loads(stored)["maria"]
    assert kind == "password" and len(salt) == 32 and len(digest) == 64
    assert accounts.verify("maria", PASSWORD) and not accounts.verify("maria", PASSWORD + "!")
    assert accounts.admit("maria", PASSWORD) == accounts.credential("maria") == salt
    for weak, says in (("short pass1", "at least 12"), ("Maria-Lopez ", "the reviewer's name")):
        with pytest.raises(PasswordRefused, match=says):
            accounts.add_password("maria-lopez", weak)
    # A reset gives a new credential; the old one no longer admits, a removal leaves none.
    token = accounts.add("maria")
    assert accounts.credential("maria") not in (None, salt)
    assert not accounts.verify("maria", PASSWORD) and accounts.verify("maria", token)
    assert accounts.remove("maria") and accounts.credential("maria") is None
    # An accounts file from before passwords (three fields) still reads, as tokens.
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "accounts.json").write_text(
        json.dumps({"ben": ["00" * 16, "ab" * 32, "2099-01-01T00:00:00+00:00"]})
    )
    assert Accounts(tmp_path / "old").load()["ben"].kind == "token"


def test_add_reviewer_password_reads_it_twice_and_refuses_weak_or_differing_ones(
    sample_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(sample_db)
    accounts = Accounts(accounts_dir(sample_db))
    for typed, says in (
        ("short\nshort\n", "at least 12 characters"),
        ("maria\nmaria\n", "at least 12 characters"),
        ("MARIA       \nMARIA       \n", "may not be the reviewer's name"),
        (f"{PASSWORD}\n{PASSWORD}x\n", "the two passwords differ"),
        (f"{PASSWORD}\n", "two lines"),
    ):
        _stdin(monkeypatch, typed)
        assert main(["serve", "add-reviewer", "maria", "--password", "--db", db]) == 2
        assert says in capsys.readouterr().err
        assert "maria" not in accounts.load()
    _stdin(monkeypatch, f"{PASSWORD}\n{PASSWORD}\n")
    assert main(["serve", "add-reviewer", "maria", "--password", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "password for maria is set" in out and PASSWORD not in out
    assert accounts.verify("maria", PASSWORD)
    assert main(["serve", "reviewers", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("maria\texpires ")
    # At a terminal it asks twice, without echo (getpass).
    asked: list[str] = []

    def getpass(prompt: str) -> str:
        asked.append(prompt)
        return "another long secret"

    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    monkeypatch.setattr("getpass.getpass", getpass)
    assert main(["serve", "reset-reviewer", "maria", "--password", "--db", db]) == 0
    assert asked == ["password: ", "again: "]
    assert accounts.verify("maria", "another long secret")
    assert not accounts.verify("maria", PASSWORD)


def test_reset_and_remove_reviewer_name_only_known_reviewers(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(sample_db)
    assert main(["serve", "reset-reviewer", "nobody", "--db", db]) == 1
    assert "no reviewer 'nobody'" in capsys.readouterr().err
    assert main(["serve", "add-reviewer", "maria", "--db", db]) == 0
    old = capsys.readouterr().out.strip()
    assert main(["serve", "reset-reviewer", "maria", "--db", db]) == 0
    new = capsys.readouterr().out.strip()
    accounts = Accounts(accounts_dir(sample_db))
    assert new != old and accounts.verify("maria", new) and not accounts.verify("maria", old)
    assert main(["serve", "reviewers", "--db", db]) == 0
    assert capsys.readouterr().out.rstrip().endswith("\ttoken")
    assert main(["serve", "remove-reviewer", "maria", "--db", db]) == 0
    assert main(["serve", "remove-reviewer", "maria", "--db", db]) == 1


def test_the_serve_help_documents_passwords_and_resets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "add-reviewer ana --password" in text and "reset-reviewer" in text
    assert main(["serve", "add-reviewer", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--password" in text and "at least 12 characters" in text
    assert main(["serve", "reset-reviewer", "--help"]) == 0
    assert "sessions" in capsys.readouterr().out


# -- over HTTP -----------------------------------------------------------------------------


def test_sign_in_takes_a_password_or_a_token_in_one_field(sample_db: Path) -> None:
    accounts = Accounts(accounts_dir(sample_db))
    accounts.add_password("maria", PASSWORD)
    token = accounts.add("ben")
    served = start_server(sample_db, {})
    try:
        status, body, _ = get(served.base + "/")
        assert status == 200 and "Token or password" in body and 'name="token"' in body
        for name, secret in (("maria", PASSWORD), ("ben", token)):
            cookie = _sign_in(served.base, name, secret)
            assert cookie is not None and "textual.js" in _page(served.base, cookie)
        for name, secret in (("maria", token), ("ben", PASSWORD), ("maria", PASSWORD[:-1])):
            assert _sign_in(served.base, name, secret) is None
    finally:
        stop(served)


def test_a_reset_or_removal_ends_signed_in_sessions_at_once(
    sample_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts = Accounts(accounts_dir(sample_db))
    accounts.add_password("maria", PASSWORD)
    ben = accounts.add("ben")
    served = start_server(sample_db, {})
    db = str(sample_db)
    try:
        maria, bens = _sign_in(served.base, "maria", PASSWORD), _sign_in(served.base, "ben", ben)
        assert maria is not None and bens is not None
        assert "textual.js" in _page(served.base, maria)
        # A new password: the old one and the session signed in with it stop at once.
        _stdin(monkeypatch, "a brand new secret\na brand new secret\n")
        assert main(["serve", "reset-reviewer", "maria", "--password", "--db", db]) == 0
        assert "textual.js" not in _page(served.base, maria)  # the sign-in page again
        status, _, _ = get(served.base + "/static/js/textual.js", headers={"Cookie": maria})
        assert status == 403
        assert _sign_in(served.base, "maria", PASSWORD) is None
        again = _sign_in(served.base, "maria", "a brand new secret")
        assert again is not None and "textual.js" in _page(served.base, again)
        # Another reviewer's session is untouched; a removal ends theirs too.
        assert "textual.js" in _page(served.base, bens)
        assert main(["serve", "remove-reviewer", "ben", "--db", db]) == 0
        assert "textual.js" not in _page(served.base, bens)
        assert "textual.js" in _page(served.base, again)
    finally:
        stop(served)


def test_an_open_workstation_closes_when_its_reviewer_is_reset(sample_db: Path) -> None:
    accounts = Accounts(accounts_dir(sample_db))
    token = accounts.add("maria")
    other = accounts.add("ben")
    served = start_server(sample_db, {})

    async def scenario() -> None:
        maria, ben = ScriptedSession(served.base), ScriptedSession(served.base)
        await maria.sign_in("maria", token)
        await ben.sign_in("ben", other)
        for session in (maria, ben):
            await session.open()
            await session.wait_for(rb"judgments decided", 60)
        accounts.add("maria")  # reset: a new token, written by another process's hand
        deadline = time.monotonic() + 10
        while not maria.closed and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert maria.closed  # idle, yet closed within moments
        assert not ben.closed
        ben.skip()
        await ben.press("j")  # ben's workstation still answers
        await ben.wait_for(rb".", 30)
        for session in (maria, ben):
            await session.close()
        with pytest.raises(SignInRefused):
            await ScriptedSession(served.base).sign_in("maria", token)

    try:
        asyncio.run(scenario())
    finally:
        stop(served)
