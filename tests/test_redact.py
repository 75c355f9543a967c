import io
import json
import stat

import pytest

from envcheck.errors import write_crash_log
from envcheck.redact import RedactedStream, Redactor, has_credentials, without_credentials


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
    assert not has_credentials(without_credentials(url)) or "?" in url


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
