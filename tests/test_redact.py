import io
import json
import stat

import pytest

from envcheck.paths import write_crash_log
from envcheck.redact import (RedactedStream, Redactor, has_credentials, redact_argv, redact_url, url_secrets,
                             without_credentials)


@pytest.mark.parametrize("text, expected", [
    ("https://user:tok3n@pypi.example.com/simple", "https://***@pypi.example.com/simple"),
    ("git@github.com:NVIDIA/cutlass", "git@github.com:NVIDIA/cutlass"),
    ("ssh://git@github.com/NVIDIA/cutlass", "ssh://***@github.com/NVIDIA/cutlass"),
    ("https://example.com/simple?token=abc123&x=1", "https://example.com/simple?token=***&x=***"),
    ("/home/bob/venv/bin/python", "/home/<user>/venv/bin/python"),
    ("/Users/carol/cutlass", "/Users/<user>/cutlass"),
    ("/root/me/x", "~/x"),
    ("/root/meadow/x", "/root/meadow/x"),
    ("plain text", "plain text"),
    # the punctuation that ends a URL's sentence stays outside it (a plan's "URL, steps 1, 2")
    ("index: https://h/simple?k=S3cret, steps 1, 2.", "index: https://h/simple?k=***, steps 1, 2."),
    ("see https://u:p4ss@h/simple.", "see https://***@h/simple."),
])
def test_redaction_table(text, expected):
    assert Redactor(env={}, home="/root/me")(text) == expected


def test_credential_like_environment_values_are_masked_even_json_escaped():
    secret = 'pa"ss\\word-123'
    redact = Redactor(env={"MY_API_KEY": secret, "PATH": "/usr/bin", "SHORT_TOKEN": "abc"}, home="/nonexistent")
    assert redact(f"value {secret}") == "value ***"
    assert secret not in redact(json.dumps({"v": secret})) and "***" in redact(json.dumps({"v": secret}))
    assert redact("/usr/bin") == "/usr/bin" and redact("abc") == "abc"


@pytest.mark.parametrize("url, secret", [
    ("https://github.com/NVIDIA/cutlass", False),
    ("https://ghp_token@github.com/NVIDIA/cutlass", True),  # a token as the user name
    ("https://user:pass@host/simple", True),
    ("http://user:pass@host/simple", True),
    ("ssh://git@github.com/NVIDIA/cutlass", False),  # a user name, not a secret
    ("ssh://git:pass@github.com/NVIDIA/cutlass", True),
    ("git@github.com:NVIDIA/cutlass", False),
    ("file:///srv/mirror/cutlass.git", False),
    ("https://host/simple?token=abc", True),
    ("/srv/mirror/cutlass", False),
])
def test_has_credentials(url, secret):
    assert has_credentials(url) is secret
    assert not has_credentials(without_credentials(url))


@pytest.mark.parametrize("name", ["OPENAI_KEY", "MY_API_KEY", "SSH_AUTH_SOCK", "GH_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY"])
def test_every_credential_like_name_is_masked_wherever_its_value_appears(name):
    redact = Redactor(env={name: "value-of-the-secret", "PATH": "value-of-the-path"}, home="/nonexistent")
    assert redact("PYTHONPATH=/opt/value-of-the-secret:value-of-the-path") == "PYTHONPATH=/opt/***:value-of-the-path"


def test_a_redacted_stream_masks_secrets_but_keeps_paths():
    out = io.StringIO()
    stream = RedactedStream(out, Redactor(env={"TOKEN": "secret-value"}, home="/root/me", paths=False))
    stream.write("pip --index-url https://u:p@host/simple in /root/me/venv with secret-value\n")
    stream.flush()
    assert out.getvalue() == "pip --index-url https://***@host/simple in /root/me/venv with ***\n"


def test_crash_logs_are_redacted_and_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.setenv("MY_TOKEN", "crash-secret-123")
    try:
        raise RuntimeError("fetch https://u:hunter22@host/x failed with crash-secret-123")
    except RuntimeError as exc:
        log = write_crash_log(exc)
    text = log.read_text()
    assert "RuntimeError" in text and "hunter22" not in text and "crash-secret-123" not in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


# ---------------------------------------------------------------------------------------------------------------
# One redaction of URLs: user info and every query value; what is kept on disk; what counts as a secret


@pytest.mark.parametrize("url, shown, kept", [
    ("https://pypi.org/simple", "https://pypi.org/simple", "https://pypi.org/simple"),
    ("https://me:pw@h/simple", "https://***@h/simple", "https://h/simple"),
    ("https://TOKEN@h/simple", "https://***@h/simple", "https://h/simple"),
    ("https://__token__:pypi-Ag@h:8443/simple/", "https://***@h:8443/simple/", "https://h:8443/simple/"),
    ("https://h/simple?private_token=S", "https://h/simple?private_token=***", "https://h/simple"),
    ("https://b.s3.amazonaws.com/w.whl?X-Amz-Credential=A&X-Amz-Security-Token=S&X-Amz-Signature=G",
     "https://b.s3.amazonaws.com/w.whl?X-Amz-Credential=***&X-Amz-Security-Token=***&X-Amz-Signature=***",
     "https://b.s3.amazonaws.com/w.whl"),
    ("https://h/c?sig=S&token=T&access_token=A&auth=U&key=K&signature=G&X-Goog-Signature=X&password=P",
     "https://h/c?sig=***&token=***&access_token=***&auth=***&key=***&signature=***&X-Goog-Signature=***&password=***",
     "https://h/c"),
    ("https://h/simple?ref=main&x=1", "https://h/simple?ref=***&x=***", "https://h/simple"),  # every query value
    ("https://h/simple?SECRETONLY", "https://h/simple?***", "https://h/simple"),
    ("https://h/simple?a=1;b=2", "https://h/simple?a=***;b=***", "https://h/simple"),
    ("https://h/w.whl#sha256=ab12", "https://h/w.whl#sha256=ab12", "https://h/w.whl#sha256=ab12"),
    ("https://h/cb#access_token=S&state=x", "https://h/cb#access_token=***&state=x", "https://h/cb#state=x"),
    ("https://me:p%40ss@h/simple", "https://***@h/simple", "https://h/simple"),
    ("https://me:p@ss@h/simple", "https://***@h/simple", "https://h/simple"),  # '@' in a password, not encoded
    ("https://me:p#ss@h/simple", "https://***@h/simple", "https://h/simple"),  # '#' in a password: pip fails, no leak
    ("https://me:p?ss@h/simple", "https://***@h/simple", "https://h/simple"),
    ("https://me:pa/ss@h/simple", "https://***@h/simple", "https://h/simple"),
    ("https://h/simple?email=a@b", "https://h/simple?email=***", "https://h/simple"),
    ("ssh://git@github.com/NVIDIA/cutlass", "ssh://***@github.com/NVIDIA/cutlass", "ssh://github.com/NVIDIA/cutlass"),
    ("file:///srv/mirror/simple", "file:///srv/mirror/simple", "file:///srv/mirror/simple"),
    ("/srv/mirror", "/srv/mirror", "/srv/mirror"),
])
def test_a_url_shown_and_kept(url, shown, kept):
    assert redact_url(url) == shown
    assert without_credentials(url) == kept
    assert Redactor(env={}, home="/nonexistent")(f"see '{url}' and \"{url}\"") == f"see '{shown}' and \"{shown}\""


@pytest.mark.parametrize("url, secret", [
    ("https://h/c.git?private_token=S", True), ("https://h/c.git?X-Amz-Security-Token=S", True),
    ("https://h/c.git?ref=main", True),  # any query: git would keep it, a Dockerfile too
    ("https://h/c.git#access_token=S", True), ("https://h/c.git#readme", False), ("https://h/c.git", False),
])
def test_has_credentials_sees_every_query(url, secret):
    assert has_credentials(url) is secret


def test_an_argv_is_redacted_argument_by_argument_before_it_is_quoted():
    argv = ("pip", "install", "--index-url=https://me:pw@h/simple?a='1'&private_token=S", "--", "torch")
    assert redact_argv(argv) == ("pip", "install", "--index-url=https://***@h/simple?a=***&private_token=***", "--", "torch")


def test_a_urls_secret_parts_are_masked_wherever_they_appear():
    secrets = url_secrets("https://me:p%40ssword-1@h/simple?x=query-value-2&y=1#access_token=fragment-3",
                          "https://TOKEN-value-4@h/", None, "ssh://git@h/x")
    assert set(secrets) == {"p%40ssword-1", "p@ssword-1", "query-value-2", "fragment-3", "TOKEN-value-4"}
    redact = Redactor(env={}, home="/nonexistent", also=secrets)
    line = "Retrying after connection broken: /simple/torch/?x=query-value-2 for p@ssword-1 (y=1)"
    assert redact(line) == "Retrying after connection broken: /simple/torch/?x=*** for *** (y=1)"
