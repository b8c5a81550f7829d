"""Redaction (docs/results.md, "Secrets"): secret values however quoted or escaped, their
pieces, and text redacted before every cut that makes a message."""

from __future__ import annotations

import html
import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from pytest_evalcases import process
from pytest_evalcases.agents.base import last_words
from pytest_evalcases.redact import MARK, MIN_SECRET, Redactor, environment_redactor, shorten
from pytest_evalcases.run.quoting import quote

PASSWORD = "p@ss\\w0rd\"Q'zz!9"
AWS_SECRET = "q8Zr2LxW0vTn5KpY7bHc+Md3FsJg9AeU/Ro1QiVy"
ENV = {"DB_PASSWORD": PASSWORD, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "HOME": "/home/someone"}


def pieces(secret: str, size: int = MIN_SECRET) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def left_of(secret: str, text: str) -> list[str]:
    """The pieces of ``secret`` (``MIN_SECRET`` long) still in ``text``."""
    return [piece for piece in pieces(secret) if piece in text]


def _xml_attribute(text: str) -> str:
    """``text`` as ElementTree (pytest's JUnit XML) writes an attribute value."""
    element = ElementTree.Element("failure", message=text)
    written = ElementTree.tostring(element, encoding="unicode")
    return written.split('message="', 1)[1].rsplit('"', 1)[0]


ESCAPES = {
    "repr": repr,
    "repr of a string with both quotes": lambda s: repr(s + "'\""),
    "JSON": json.dumps,
    "JSON, ASCII only": lambda s: json.dumps(s + "é", ensure_ascii=True),
    "XML attribute": _xml_attribute,
    "HTML": html.escape,
    "XML with &apos;": lambda s: html.escape(s, quote=False).replace("'", "&apos;"),
    "JSON of a repr": lambda s: json.dumps(repr(s)),
    "XML of a repr": lambda s: _xml_attribute(repr(s)),
}


@pytest.mark.parametrize("escape", ESCAPES.values(), ids=ESCAPES.keys())
def test_a_secret_is_redacted_however_escaped(escape: object) -> None:
    assert callable(escape)
    escaped = escape(f"the password is {PASSWORD}, the key {AWS_SECRET}")
    # The escaped form is not the value: redacting the value alone leaves it.
    assert PASSWORD not in escaped

    redacted = Redactor(ENV)(escaped)

    assert redacted.count(MARK) == 2
    assert not left_of(PASSWORD, redacted)
    assert "the password is " in redacted
    for part in ("p@ss", "w0rd", "zz!9"):
        assert part not in redacted


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda s: s[:28] + "…", id="the first 28 characters (a quote's cut)"),
        pytest.param(lambda s: "…" + s[-20:], id="the last 20 characters (a tail's cut)"),
        pytest.param(lambda s: s[3:11], id="8 characters from the middle"),
        pytest.param(lambda s: repr(s + "'")[:12], id="the start of its repr"),
        pytest.param(lambda s: json.dumps(s)[-10:], id="the end of its JSON"),
    ],
)
def test_a_piece_of_a_secret_is_redacted(cut: object) -> None:
    assert callable(cut)
    for secret in (AWS_SECRET, PASSWORD):
        text = f"said: {cut(secret)} and went on"

        redacted = Redactor(ENV)(text)

        assert MARK in redacted
        assert not left_of(secret, redacted.replace(MARK, "")), text
        assert redacted.startswith("said: ")
        assert redacted.endswith(" and went on")


def test_pieces_shorter_than_the_minimum_and_other_text_stay() -> None:
    text = f"kept: {AWS_SECRET[:7]} {AWS_SECRET[-7:]}; /home/someone/project; {PASSWORD[:4]}"
    assert Redactor(ENV)(text) == text


def test_adjacent_pieces_become_one_mark_and_the_rest_is_kept() -> None:
    text = f"a {AWS_SECRET}{AWS_SECRET} b {AWS_SECRET[5:30]} c"
    assert Redactor(ENV)(text) == f"a {MARK} b {MARK} c"


def test_a_path_is_redacted_whole_but_not_piece_by_piece(tmp_path: Path) -> None:
    credentials = tmp_path / "service-account" / "gha-creds-1234.json"
    credentials.parent.mkdir()
    credentials.write_text("{}", "utf-8")
    env = {"GOOGLE_APPLICATION_CREDENTIALS": str(credentials)}
    # Sharing a directory with the file is no leak: its pieces would blank every path.
    beside = str(tmp_path / "service-account" / "workspace")

    redacted = Redactor(env)(f"read {credentials}, wrote {beside}")

    assert redacted == f"read {MARK}, wrote {beside}"


def test_shorten_redacts_before_it_cuts_so_no_shape_loses_its_prefix() -> None:
    # An assignment whose value the cut would leave too short to look like one, and a
    # key whose prefix the tail would cut off: neither in the environment.
    key = "sk-ant-api03-" + "Tq9" * 20
    head = "x" * 145 + "api_key=QUJDREVGR0hJSktMTU5PUFFSU1RVVg== rest"
    tail = "start " + key + " " + "y" * 595

    assert shorten(head, 160, redactor=Redactor({})) == "x" * 145 + f"api_key={MARK}…"
    cut = shorten(tail, 600, keep="tail", redactor=Redactor({}))
    assert cut == "…" + MARK + " " + "y" * 595
    assert key[-20:] not in cut


def test_shorten_never_halves_a_mark() -> None:
    redactor = Redactor(ENV)
    head = shorten("x" * 155 + AWS_SECRET + "tail", 160, redactor=redactor)
    tail = shorten("head" + AWS_SECRET + "y" * 595, 600, keep="tail", redactor=redactor)

    assert head == "x" * 155 + MARK + "…"
    assert tail == "…" + MARK + "y" * 595


def test_shorten_reads_only_a_margin_past_the_cut() -> None:
    answer = "word " * 1_000_000
    assert shorten(answer, 160, redactor=Redactor(ENV)) == answer[:160] + "…"


def test_quotes_and_tails_redact_before_they_cut_and_escape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    answer = f"The password is {PASSWORD}; " + "x" * 105 + AWS_SECRET + " and that is all."
    stderr = f"connecting with {PASSWORD} and {AWS_SECRET}" + "y" * 580
    output = f"{PASSWORD} {AWS_SECRET}" + "y" * 280
    timed_out = process.ProcessResult(None, stdout="", stderr=stderr, duration=1.0)
    said = {
        "quote": quote(answer),
        "quote, tail": quote(output, 300, keep="tail"),
        "process.tail": process.tail(stderr + "\n"),
        "ProcessResult.said": timed_out.said(),
        "last_words": last_words(timed_out, limit=30),
    }

    for where, text in said.items():
        assert MARK in text, where
        assert not left_of(AWS_SECRET, text), where
        assert not left_of(PASSWORD, text), where
        assert "p@ss" not in text, where
    assert said["quote"].startswith(f"'The password is {MARK}; xxx")


def test_quotes_read_the_environment_once_and_again_when_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "s3cr3t-value-0042"
    monkeypatch.delenv("EVALCASES_TEST_TOKEN", raising=False)
    first = environment_redactor()
    # pytest sets this one for every phase of every test.
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (call)")
    assert environment_redactor() is first
    assert quote(f"found {secret}") == f"'found {secret}'"

    monkeypatch.setenv("EVALCASES_TEST_TOKEN", secret)
    assert environment_redactor() is not first
    assert quote(f"found {secret}") == f"'found {MARK}'"

    monkeypatch.delenv("EVALCASES_TEST_TOKEN")
    assert quote(f"found {secret}") == f"'found {secret}'"

    # ... unless it could hold a URL's password.
    plain = environment_redactor()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y[http://u:pw-8842@h] (call)")
    assert environment_redactor() is not plain


def test_a_urls_password_is_redacted_and_its_scheme_user_and_host_stay() -> None:
    redact = Redactor({})
    assert redact("DATABASE_URL=postgres://app:pw-1@db.internal:5432/shop ok") == (
        f"DATABASE_URL=postgres://app:{MARK}@db.internal:5432/shop ok"
    )
    assert redact("amqp://:s3cr3t@queue/") == f"amqp://:{MARK}@queue/"
    # No password, a port, or an @ in the path: nothing to hide.
    for text in (
        "ssh://git@github.com:22/x.git",
        "https://example.com:8443/a@b",
        "see http://x.org/?q=a:b@c",
    ):
        assert redact(text) == text


def test_the_password_of_a_url_in_the_environment_is_a_secret_value_in_any_form() -> None:
    password = "Zx9!p%40ssWord"
    redact = Redactor({"DATABASE_URL": f"postgres://app:{password}@db/shop"})
    # Quoted alone, decoded, or cut: the URL shape is gone but the value is known.
    for text in (password, "Zx9!p@ssWord", password[:10], json.dumps({"pw": password})):
        said = redact(f"the agent wrote {text} here")
        assert left_of(password, said) == [], said
        assert left_of("Zx9!p@ssWord", said) == [], said


def test_variables_the_ini_names_are_secret_values() -> None:
    env = {"NPM_AUTH": "npm-auth-0123456789abc", "NPM_CONFIG_REGISTRY": "https://registry.example"}
    assert Redactor(env)("auth npm-auth-0123456789abc") == "auth npm-auth-0123456789abc"
    named = Redactor(env, names=["NPM_AUTH"])
    assert named("auth npm-auth-0123456789abc") == f"auth {MARK}"
    assert named("registry https://registry.example") == "registry https://registry.example"


def test_may_change_is_never_wrong_when_it_says_no() -> None:
    redact = Redactor({**ENV, "DATABASE_URL": "postgres://app:Tr0ub4dor-and-3@db/x"})
    texts = [
        # Every piece of each secret, at every offset of the bytes, in every escape.
        *(
            "x" * offset + escape(piece) + "y" * 3
            for secret in (PASSWORD, AWS_SECRET, "Tr0ub4dor-and-3")
            for piece in pieces(secret)
            for escape in ESCAPES.values()
            for offset in range(4)
        ),
        "sk-ant-api03-abcdefghijklmnop1234",
        "password = 'abcdefghijklmnopqrstuvwxyz'",
        "redis://:hunter2@cache",
        "Authorization: Bearer abcdefghijklmnopqrstuvwx",
    ]
    for text in texts:
        if redact(text) != text:
            assert redact.may_change(text.encode("utf-8", "surrogateescape")), text
    # What it skips: text without any hint, and bytes that are not UTF-8.
    assert not redact.may_change(b"def main():\n    return 42\n" * 1000)
    assert not redact.may_change(bytes(range(256)).replace(b"://", b"") * 100)
