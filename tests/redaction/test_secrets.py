"""Secrets are never stored: the redactor on the corpus, and the sweep of what an older version
stored (``bigmind scan-secrets``, migration 0013) on both backends.

The write paths themselves (every MCP write tool, every CLI write command) are in
``test_secrets_paths.py``.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import urllib.parse
from collections import Counter

import pytest
from secret_corpus import (
    Fakes,
    database_text,
    ordinary_lines,
    placements,
    secret_cases,
    seed_raw,
)

from bigmind import redact
from bigmind.cli.main import main
from bigmind.memory.focus import file_list
from bigmind.models import content_hash, now_ts
from bigmind.redaction import detectors
from bigmind.search import keyword
from bigmind.storage.migrations import migrate
from bigmind.storage.schema import with_text
from bigmind.storage.store import Store

PLACED = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


# -- the corpus ---------------------------------------------------------------------------------
def test_the_corpus_secrets_are_all_redacted() -> None:
    cases = secret_cases()
    kinds = {k for c in cases for k in c.kinds}
    assert len(cases) >= 40 and len(kinds) >= 12, (len(cases), sorted(kinds))
    missed = []
    for c in cases:
        out = redact.redact(c.text).text
        if any(s in out for s in c.secrets):
            missed.append(c.text[:80])
        assert PLACED.search(out), c.text[:80]
    found = 100 * (len(cases) - len(missed)) / len(cases)
    print(f"secrets corpus: {len(cases)} cases, {len(kinds)} kinds, {found:.1f} % redacted")
    assert missed == []


def test_ordinary_engineering_text_is_left_alone() -> None:
    lines = ordinary_lines()
    assert len(lines) >= 200
    changed = [line for line in lines if redact.redact(line).text != line]
    share = 100 * len(changed) / len(lines)
    print(f"ordinary corpus: {len(lines)} sentences, {len(changed)} changed ({share:.1f} %)")
    assert share <= 2.0, changed


def test_the_corpus_generator_makes_what_the_fixture_names() -> None:
    """The check above can fail: a marker the generator does not know is an error, and a
    generated secret really is in its sentence."""
    with pytest.raises(KeyError):
        Fakes().make("no-such-kind")
    for c in secret_cases():
        assert c.secrets and all(s in c.text for s in c.secrets)


# -- the redactor -------------------------------------------------------------------------------
def test_each_secret_becomes_a_placeholder_naming_its_kind() -> None:
    f = Fakes()
    key, token = f.make("aws-access-key")[0], f.make("github-token")[0]
    r = redact.redact(f"export AWS_ACCESS_KEY_ID={key}\ngit push https://x:{token}@github.com/a/b")
    assert r.text == (
        "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\n"
        "git push https://x:[REDACTED:github-token]@github.com/a/b"
    )
    assert r.found == {"aws-access-key": 1, "github-token": 1}


def test_a_private_key_block_goes_whole_from_begin_to_end() -> None:
    pem, body = Fakes().pem("OPENSSH PRIVATE KEY", 4)
    r = redact.redact(f"the key:\n{pem}\nthen chmod 600")
    assert r.text == "the key:\n[REDACTED:private-key]\nthen chmod 600"
    truncated = "\n".join(pem.splitlines()[:3])  # a paste cut before END
    assert redact.redact(f"{truncated}\n\nnext paragraph").text == (
        "[REDACTED:private-key]\n\nnext paragraph"
    )
    assert all(line not in r.text for line in body)


def test_a_secret_pasted_twice_goes_twice() -> None:
    token = Fakes().make("hex-secret")[0]
    r = redact.redact(f'JWT_SECRET="{token}"\nthen I ran ./sign.sh {token}')
    assert token not in r.text and r.found == {"secret": 2}


@pytest.mark.parametrize(
    "text",
    [
        "password=<your password>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: ****",
        "the password reset flow sends a link",
        "postgres://app:${DB_PASSWORD}@localhost/app",
        "api_key = settings.STRIPE_API_KEY",
        'password = os.environ["DB_PASSWORD"]',
        "password: [REDACTED:password]",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8, uuid 123e4567-e89b-12d3-a456-426614174000",
        "def login(user: str, password: str | None = None) -> None:",
    ],
)
def test_placeholders_references_and_prose_stay(text: str) -> None:
    assert redact.redact(text).text == text


def test_redacting_twice_changes_nothing_more() -> None:
    texts = [c.text for c in secret_cases()] + [p.text for p in placements(Fakes(5))]
    for text in texts:
        once = redact.redact(text).text
        assert redact.redact(once).text == once


# -- secrets in ordinary phrasing ---------------------------------------------------------------
def test_every_placement_is_redacted_and_the_sentence_kept() -> None:
    """Prose in four languages, a value on the next line, split keys, full-width letters, base64
    and percent-encoded URLs: the secret goes, the words around it stay."""
    for p in placements(Fakes(6)):
        out = redact.redact(p.text).text
        assert not any(s in out for s in p.secrets), (p.kind, out)
        words = [w for w in PLACED.sub(" ", out).split() if len(w) > 3]
        assert words == [w for w in words if w in p.text], (p.kind, out)  # nothing else changed


def test_a_split_key_goes_whole_and_only_it() -> None:
    f = Fakes(7)
    key, pat = f.make("aws-access-key")[0], f.make("github-pat")[0]
    text = f"Deploy with {key[:9]}\n  {key[9:]} and {pat[:30]}\n{pat[30:]} and then ship it."
    assert redact.redact(text).text == (
        "Deploy with [REDACTED:aws-access-key] and [REDACTED:github-token] and then ship it."
    )


def test_invisible_and_full_width_characters_are_kept_outside_a_secret() -> None:
    token = Fakes(8).make("github-token")[0]
    text = f"Ｗｉｎｄｏｗｓ ½ build \u2066ok\u2069: {token[:6]}\u200b{token[6:]} · ﬁle"
    assert redact.redact(text).text == (
        "Ｗｉｎｄｏｗｓ ½ build \u2066ok\u2069: [REDACTED:github-token] · ﬁle"
    )


def test_an_encoded_run_goes_only_when_its_text_holds_a_secret() -> None:
    url = "postgres://app:Harbor-Fog-7731@db.internal/payments"
    plain = base64.b64encode(b"postgres://db.internal/payments?sslmode=require").decode()
    secret = base64.b64encode(url.encode()).decode()
    assert redact.redact(f"a {plain} b").text == f"a {plain} b"
    assert redact.redact(f"a {secret} b").text == "a [REDACTED:password] b"
    quoted = urllib.parse.quote(url, safe="")
    assert redact.redact(f"next={quoted}").text == (
        "next=postgres%3A%2F%2Fapp%3A[REDACTED:password]%40db.internal%2Fpayments"
    )


@pytest.mark.parametrize(
    "text",
    [
        "The cache token 9fceb02d0ae598e95dc970b74767f193 names the build",
        "see token 9fceb02d0ae598e95dc970b74767f193 in the log line",
        "The password is required, the secret manager is Vault 1.15.",
        "Das Passwort ist in Vault gespeichert.",
        "The refresh token is opaque and 32 bytes long.",
        "DB_PASSWORD=\n# set by CI",
    ],
)
def test_statements_about_secrets_that_hold_none_stay(text: str) -> None:
    assert redact.redact(text).text == text


def test_a_file_list_is_redacted_like_any_text() -> None:
    token = Fakes(9).make("github-token")[0]
    files = ["./src/app.py", f"https://x:{token}@github.com/acme/app.git", "pw for ci: Harbor-7731"]
    with redact.collecting() as found:
        out = file_list(files)
    assert out == [
        "src/app.py",
        "https:/x:[REDACTED:github-token]@github.com/acme/app.git",
        "pw for ci: [REDACTED:password]",
    ]
    assert found == {"github-token": 1, "password": 1}


def test_describe_names_counts_never_values() -> None:
    assert redact.describe({"aws-access-key": 1, "password": 2}) == (
        "Redacted before storing: 2 passwords, 1 AWS access key."
    )
    assert redact.describe({"jwt": 1}) == "Redacted before storing: 1 JWT."
    assert set(redact.kinds()) == set(redact.LABELS)


def test_scrub_reports_to_the_collecting_call_only() -> None:
    token = Fakes().make("github-token")[0]
    assert redact.scrub(f"token {token}") == "token [REDACTED:github-token]"  # nobody collects
    with redact.collecting() as outer:
        redact.scrub(f"GITHUB_TOKEN={token}")
        with redact.collecting() as inner:
            redact.scrub("password=Xk9#mP2vLq")
        redact.scrub("nothing to see")
    assert outer == Counter({"github-token": 1}) and inner == Counter({"password": 1})


def test_the_prefilter_loses_no_match() -> None:
    """Reading only around the hints finds what each pattern finds scanning the whole text."""
    texts = [c.text for c in secret_cases()] + ordinary_lines()
    texts.append("\n".join(texts))  # many lines: windows, not whole texts
    for text in texts:
        everywhere = {
            f
            for d in detectors._detectors()
            for m in d.pattern.finditer(text)
            for f in detectors._provider_finding(d, m, text)
        }
        assert set(detectors._providers(text, detectors._anchors(text, text.lower()))) == everywhere


def test_ordinary_text_does_not_load_detect_secrets() -> None:
    probe = (
        "import sys\n"
        "from bigmind import redact\n"
        "r = redact.redact('We chose RabbitMQ over Kafka; see https://example.com/docs for why.')\n"
        "assert not r.changed\n"
        "print('detect_secrets' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


# -- what an older version stored ---------------------------------------------------------------
def test_scan_secrets_redacts_every_table_in_place(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = seed_raw(store, Fakes(7))
    assert set(planted.by_table) == set(with_text())
    secrets = planted.strings
    assert all(s.lower() in database_text(store.db) for s in secrets)  # the check sees them
    fact = next(f for f in store.facts.top(10) if "CI uses" in f.fact)
    with store.db.transaction() as tx:  # a vector made from the secret, and one from clean text
        for item in (str(fact.id), "999999"):
            tx.execute(
                "INSERT INTO embeddings(kind, item_id, user_id, model, dim, content_hash,"
                " embedded_at) VALUES ('fact', ?, ?, 'm', 3, 'h', '2024-01-01 00:00:00')",
                (item, store.uid),
            )

    assert main(["scan-secrets", "--dry-run", "--json"]) == 0
    out, err = capsys.readouterr()
    dry = json.loads(out)
    assert dry["applied"] is False and dry["secrets"] == planted.count
    assert {t: d["rows"] for t, d in dry["tables"].items()}["facts"] == 2
    assert all(s.lower() in database_text(store.db) for s in secrets)  # nothing changed

    assert main(["scan-secrets"]) == 0
    out, err = capsys.readouterr()
    assert f"Redacted {planted.count} secret(s)" in out and "facts" in out
    assert not any(s in out + err for s in secrets)
    raw = database_text(store.db)
    assert [s for s in secrets if s.lower() in raw] == []
    fact = store.get_fact(fact.id)
    assert fact.fact == "The CI uses [REDACTED:gitlab-token] to push images"
    same = store.facts.active_with_hash(content_hash(fact.fact))  # its hash was recomputed
    assert same is not None and same.id == fact.id
    assert [h.id for h in keyword.hits(store, "fact", "CI push images", 5)] == [fact.id]
    vectors = store.db.query("SELECT item_id FROM embeddings WHERE kind = 'fact'")
    assert [r["item_id"] for r in vectors] == ["999999"]
    bound = store.db.query("SELECT path, name FROM fact_files ORDER BY id")
    assert [(r["path"], r["name"]) for r in bound] == [
        ("src/ci.py", "ci.py"),
        ("keys/[REDACTED:aws-access-key].pem", "[redacted:aws-access-key].pem"),
    ]  # the lookup key follows the path
    focus = store.db.query("SELECT files FROM focus_announcements")
    assert json.loads(focus[0]["files"]) == ["src/app.py", "deploy/[REDACTED:github-token].env"]

    assert main(["scan-secrets", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["secrets"] == 0  # nothing left


def test_the_upgrade_migration_redacts_what_was_stored_before(store: Store) -> None:
    secrets = seed_raw(store, Fakes(8)).strings
    with store.db.transaction() as tx:  # as if this database predated 0013
        tx.execute("DELETE FROM bigmind_migrations WHERE name = '0013_redact_stored_secrets'")
    assert migrate(store.db) == ["0013_redact_stored_secrets"]
    raw = database_text(store.db)
    assert [s for s in secrets if s.lower() in raw] == []
    assert "[redacted:private-key]" in raw
    assert migrate(store.db) == []  # once


def test_the_upgrade_migration_redacts_secrets_in_ordinary_phrasing(store: Store) -> None:
    """Stored raw by a version whose detector missed them: swept by 0026 at the upgrade."""
    cases = placements(Fakes(29))
    with store.db.transaction() as tx:  # written raw, as an older version stored them
        for case in cases:
            store.facts.insert(
                tx,
                category="codebase",
                fact=case.text,
                source_session=None,
                confidence=1.0,
                importance=5,
                digest=content_hash(case.text),
                ts=now_ts(),
            )
        tx.execute("DELETE FROM bigmind_migrations WHERE name = '0026_redact_phrased_secrets'")
    assert migrate(store.db) == ["0026_redact_phrased_secrets"]
    raw = database_text(store.db)
    assert [c.kind for c in cases if any(s.lower() in raw for s in c.secrets)] == []
    assert migrate(store.db) == []  # once
