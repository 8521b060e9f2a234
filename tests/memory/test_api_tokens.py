"""`bigmind token`: a token is printed once, kept as its digest, listed without it, revoked."""

from __future__ import annotations

import json

import pytest

from bigmind.cli.main import main
from bigmind.memory import api_tokens
from bigmind.storage.store import Store


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_create_list_revoke(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "token", "create", "bob", "--expires", "30", "--label", "laptop")
    assert code == 0
    secret = out.splitlines()[0]
    assert secret.startswith("bm_") and len(secret) == 46
    assert "for bob, valid until" in out and "shown only now" in out
    # Only the digest is kept: the secret is in no column of the table.
    found = api_tokens.check(store.db, secret)
    assert found is not None and found.username == "bob" and found.label == "laptop"
    rows = store.db.query("SELECT * FROM api_tokens")
    assert rows and not any(secret in str(v) for r in rows for v in r.values())
    # bob is a user now (a member).
    assert cli(capsys, "user", "list")[1].count("bob") == 1

    code, out, _ = cli(capsys, "token", "create", "bob", "--json")
    made = json.loads(out)
    assert made["user"] == "bob" and made["expires_at"] is None and made["token"] != secret

    code, out, _ = cli(capsys, "token", "list")
    assert code == 0 and out.count(" bob ") == 2 and secret not in out and "live" in out
    listed = json.loads(cli(capsys, "token", "list", "bob", "--json")[1])["tokens"]
    assert {t["label"] for t in listed} == {"laptop", None}

    code, out, _ = cli(capsys, "token", "revoke", made["id"])
    assert code == 0 and made["id"] in out
    assert api_tokens.check(store.db, made["token"]) is None
    assert api_tokens.check(store.db, secret) is not None  # the other one still works
    code, out, _ = cli(capsys, "token", "revoke", "bob")
    assert out.startswith("Revoked 1 token(s)")
    assert cli(capsys, "token", "revoke", "bob")[1] == "Already revoked.\n"
    assert api_tokens.check(store.db, secret) is None
    assert "revoked" in cli(capsys, "token", "list")[1]


def test_errors_are_one_line(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "token", "revoke", "nobody")
    assert code == 3 and err.count("\n") == 1 and "No token with id 'nobody'" in err
    code, _, err = cli(capsys, "token", "create", "bob", "--expires", "0")
    assert code == 2 and "--expires must be 1 to 3650 days" in err
    code, _, err = cli(capsys, "token", "list", "zed")
    assert code == 3 and "No user 'zed'" in err


def test_what_is_not_a_live_token_is_refused(store: Store) -> None:
    made = api_tokens.create(store.db, "bob")
    assert api_tokens.check(store.db, made.secret) is not None
    assert api_tokens.check(store.db, made.secret + "x") is None
    assert api_tokens.check(store.db, made.secret[3:]) is None  # without the prefix
    assert api_tokens.check(store.db, "bm_" + "a" * 500) is None


def test_another_users_tokens_need_an_admin(
    store: Store, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli(capsys, "token", "create", "bob")[0] == 0  # alice, the first user, is admin
    monkeypatch.setenv("BIGMIND_USER", "bob")  # a member
    code, out, _ = cli(capsys, "token", "create", "bob")
    assert code == 0 and out.startswith("bm_")  # their own
    assert cli(capsys, "token", "list", "bob")[0] == 0
    for args in (("create", "alice"), ("list",), ("revoke", "alice")):
        code, _, err = cli(capsys, "token", *args)
        assert code == 4 and "Only an admin can" in err and err.count("\n") == 1
    assert cli(capsys, "token", "revoke", "bob")[0] == 0
