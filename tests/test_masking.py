"""autolab_site.masking: the one rule that masks secrets in settings and text, as a table of cases."""
from __future__ import annotations

import pytest

from autolab_site.masking import MASK, is_secret_name, mask_secrets, mask_text

# (setting name, is a secret)
NAMES = [
    ("api_key", True),
    ("OPENAI_API_KEY", True),
    ("apiKey", True),
    ("x-api-key", True),
    ("key", True),
    ("HF_TOKEN", True),
    ("access_token", True),
    ("client_secret", True),
    ("db_password", True),
    ("PGPASSWD", False),  # one word that is not "passwd": names are read by words
    ("aws_credentials", True),
    ("Authorization", True),
    ("max_tokens", False),  # a count of tokens
    ("n_output_tokens", False),
    ("monkey_patch", False),  # "key" inside a word is not the word
    ("keyboard", False),
    ("author", False),
    ("model_name", False),
    ("temperature", False),
    (3, False),
]


@pytest.mark.parametrize(("name", "secret"), NAMES)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


# (text, what is shown)
TEXTS = [
    ("", ""),
    ("plain words, nothing to hide", "plain words, nothing to hide"),
    ("sk-proj-abcdefghijklmnop1234", MASK),
    ("key sk-ant-api03-AAAAbbbbCCCCdddd used", f"key {MASK} used"),
    ("xai-AbCdEfGhIjKlMnOp", MASK),
    ("AIzaSyA1234567890abcdefghijklmnop", MASK),
    ("hf_abcdefghijklmnopqrstu", MASK),
    ("ghp_abcdefghijklmnopqrstu", MASK),
    ("AKIAABCDEFGHIJKLMNOP", MASK),
    ("sk-learn and hf_hub are libraries", "sk-learn and hf_hub are libraries"),
    ("Authorization: Bearer abc.def.ghi123", f"Authorization: Bearer {MASK}"),
    ("curl -H 'Bearer abcdefgh12345'", f"curl -H 'Bearer {MASK}'"),
    ("https://user:hunter2@example.org/v1", f"https://user:{MASK}@example.org/v1"),
    ("https://api.example.org/v1", "https://api.example.org/v1"),
    ("OPENAI_API_KEY=plainvalue python run.py", f"OPENAI_API_KEY={MASK} python run.py"),
    ('api_key = "not-key-shaped"', f'api_key = "{MASK}"'),
    ('"token": "abc"', f'"token": "{MASK}"'),
    ("max_tokens = 4096", "max_tokens = 4096"),
    ('api_key = ""', 'api_key = ""'),
    ("timeout_sec = 3600.0", "timeout_sec = 3600.0"),
]


@pytest.mark.parametrize(("text", "shown"), TEXTS)
def test_text_is_masked_where_a_secret_stands(text, shown):
    assert mask_text(text) == shown


def test_settings_are_masked_by_name_and_by_shape_at_any_depth():
    config = {
        "agent": {
            "model_name": "openai/claude-opus-4.6",
            "env": {"OPENAI_API_KEY": "anything at all", "HOME": "/root"},
            "kwargs": {"max_tokens": 4096, "api_base": "https://u:pw@proxy.example/v1", "extra": ["--key", "sk-abcdefghijklmnop12"]},
        },
        "secrets": {"a": 1},
        "api_key": None,
        "token": "",
        "auth": True,
        "job_id": "1e3d2bdd-a9a6-49f3-a696-11ffe70eb935",
    }
    assert mask_secrets(config) == {
        "agent": {
            "model_name": "openai/claude-opus-4.6",
            "env": {"OPENAI_API_KEY": MASK, "HOME": "/root"},
            "kwargs": {"max_tokens": 4096, "api_base": f"https://u:{MASK}@proxy.example/v1", "extra": ["--key", MASK]},
        },
        "secrets": MASK,
        "api_key": None,  # nothing to hide: "not set" is worth seeing
        "token": "",
        "auth": True,
        "job_id": "1e3d2bdd-a9a6-49f3-a696-11ffe70eb935",
    }
    assert config["agent"]["env"]["OPENAI_API_KEY"] == "anything at all", "the input is not changed"
