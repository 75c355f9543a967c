import json

import pytest

from envcheck.redact import Redactor


@pytest.mark.parametrize("text, expected", [
    ("https://user:tok3n@pypi.example.com/simple", "https://***@pypi.example.com/simple"),
    ("git@github.com:NVIDIA/cutlass", "git@github.com:NVIDIA/cutlass"),
    ("ssh://git@github.com/NVIDIA/cutlass", "ssh://***@github.com/NVIDIA/cutlass"),
    ("https://example.com/simple?token=abc123&x=1", "https://example.com/simple?token=***&x=1"),
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
