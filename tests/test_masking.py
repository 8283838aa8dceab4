"""autolab_site.masking: the one rule that masks secrets in settings and text, as a table of cases."""
from __future__ import annotations

import pytest

import json

from autolab_site.masking import NUMPY_CHARS, MASK, is_secret_name, mask_chunks, mask_secrets, mask_text, mask_texts

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
    ("token_budget", False),  # a name says what it holds by its last word: a budget, not a token
    ("key_count", False),
    ("password_length", False),
    ("api_key_env", False),  # the name of a variable holding a key, not the key
    ("secret_key", True),
    ("AWS_SECRET_ACCESS_KEY", True),
    ("auth_header", True),
    ("TOOL_ROUTER_SECRET_SEED", True),  # "secret" names a secret wherever it stands
    ("password_hash", False),
    ("pad_token_id", False),  # "key", "token" and "auth" name one only last: code is full of these
    ("IMAGE_TOKEN_ID", False),
    ("KEY_RANGE", False),
    ("key_states", False),
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

# Issue 43: the spellings the rule missed, each planted in a real trial by an attacker's review.
SECRET = "Zq8vTmW3pL5xR2nK"
ISSUE_SPELLINGS = [
    (f"Authorization: Token {SECRET}", f"Authorization: Token {MASK}"),
    (f"Authorization: ApiKey {SECRET}", f"Authorization: ApiKey {MASK}"),
    (f"Authorization: Key {SECRET}", f"Authorization: Key {MASK}"),
    (f"curl -H 'Authorization: Token {SECRET}' https://x.org", f"curl -H 'Authorization: Token {MASK}' https://x.org"),
    (f'curl -H "authorization: apikey {SECRET}"', f'curl -H "authorization: apikey {MASK}"'),
    (f"python run.py --api-key {SECRET} --model m", f"python run.py --api-key {MASK} --model m"),
    (f"python run.py --token {SECRET}", f"python run.py --token {MASK}"),
    (f"python run.py --api-key={SECRET}", f"python run.py --api-key={MASK}"),
    (f"python run.py --password '{SECRET}'", f"python run.py --password '{MASK}'"),
    (f"GET https://api.example.org/v1?api_key={SECRET}&limit=5", f"GET https://api.example.org/v1?api_key={MASK}&limit=5"),
    (f"https://x.org/a?model=m&access_token={SECRET}#top", f"https://x.org/a?model=m&access_token={MASK}#top"),
    (f"git clone https://{SECRET}@github.com/org/repo.git", f"git clone https://{MASK}@github.com/org/repo.git"),
    (f"https://oauth2:{SECRET}@gitlab.com/org/repo", f"https://oauth2:{MASK}@gitlab.com/org/repo"),
    (f'{{\\"api_key\\": \\"{SECRET}\\"}}', f'{{\\"api_key\\": \\"{MASK}\\"}}'),
    (f"{{'headers': {{'x-api-key': '{SECRET}'}}}}", f"{{'headers': {{'x-api-key': '{MASK}'}}}}"),
    (f'[{{"name": "OPENAI_API_KEY", "value": "{SECRET}"}}]', f'[{{"name": "OPENAI_API_KEY", "value": "{MASK}"}}]'),
    (f"[{{'name': 'HF_TOKEN', 'value': {SECRET}}}]", f"[{{'name': 'HF_TOKEN', 'value': {MASK}}}]"),
    (f'[{{"key": "Authorization", "value": "Bearer {SECRET}"}}]', f'[{{"key": "Authorization", "value": "Bearer {MASK}"}}]'),
    (f'[["Authorization", "Token {SECRET}"]]', f'[["Authorization", "Token {MASK}"]]'),
    (f"[('X-Api-Key', '{SECRET}')]", f"[('X-Api-Key', '{MASK}')]"),
    (f'[["authorization", "token {SECRET}"]]', f'[["authorization", "token {MASK}"]]'),
    # More of the same family.
    (f'os.environ["OPENAI_API_KEY"] = "{SECRET}"', f'os.environ["OPENAI_API_KEY"] = "{MASK}"'),
    (f"X-Api-Key: {SECRET}", f"X-Api-Key: {MASK}"),
    (f'headers = {{"Authorization": "Token {SECRET}"}}', f'headers = {{"Authorization": "Token {MASK}"}}'),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Authorization: Basic {MASK}"),
    (f"export ANTHROPIC_API_KEY='{SECRET}'", f"export ANTHROPIC_API_KEY='{MASK}'"),
    (f"password: {SECRET}", f"password: {MASK}"),
    ("export HF_TOKEN=hf_abcdefghijklmnopqrstu", f"export HF_TOKEN={MASK}"),
    ("sk_live_abcdefghijklmnop1234", MASK),
    ("glpat-abcdefghij1234567890", MASK),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", MASK),
]

# Prose, code and counts that name a key or a token without holding one: shown as they are.
NOT_SECRETS = [
    "max_tokens: 100",
    "python train.py --token-budget 5 --max-tokens 4096",
    "key_count = 12; token_limit: 4096; password_length=16",
    "a basic implementation of the key idea",
    "Token expired, please log in again",
    "sorted(rows, key=lambda row: row[1])",
    'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    "client = OpenAI(api_key=api_key)",
    "curl -H \"Authorization: Bearer $OPENAI_API_KEY\" https://api.openai.com/v1/models",
    "api_key=${OPENAI_API_KEY:-}",
    "ssh://git@github.com/org/repo.git and git@github.com:org/repo.git",
    "https://pypi.org/simple/torch/?page=2",
    "python run.py --no-auth main.py",
    'fields = ["api_key", "model"]',
    "the bearer of bad news",
    "api_key: null",
    '"api_key": "",',
    # Code and prose from real tasks and trials.
    "model openai/xai-grok-4-20-reasoning",
    "image_token_id: int = 128815",
    "labels[labels == self.tokenizer.pad_token_id] = -100",
    "KEY_RANGE     = 50000",
    "const uint8_t *key = buf;",
    "def run_case(key: bytes, iv: bytes, pt: bytes) -> str:",
    "# Different key: all-zero key, all-zero IV",
    "public = [{key: value for key, value in t.items()} for t in tools]",
    "def __init__(self, api_key: str, token: Optional[str] = None):",
    'key = f"{prefix}.lora_down.weight"',
    "usage: upload.py [--huggingface_token HUGGINGFACE_TOKEN] [--api-key API_KEY]",
]


@pytest.mark.parametrize(("text", "shown"), TEXTS + ISSUE_SPELLINGS)
def test_text_is_masked_where_a_secret_stands(text, shown):
    assert mask_text(text) == shown


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_text_that_holds_no_secret_is_left_alone(text):
    assert mask_text(text) == text


@pytest.mark.parametrize(("text", "shown"), TEXTS + ISSUE_SPELLINGS)
def test_a_secret_is_masked_wherever_it_stands_in_a_long_text(text, shown):
    """The same spellings amid a log: a line among thousands, after a megabyte-long line, and cut into lines by CRLF."""
    filler = "\n".join(f"step {n}: loss=0.{n:04d} tokens=512" for n in range(3000))
    long_line = "x" * 1_000_000
    assert mask_text(f"{filler}\n{text}\n{filler}") == f"{filler}\n{shown}\n{filler}"
    assert mask_text(f"{long_line}\n{text}") == f"{long_line}\n{shown}"
    assert mask_text(f"{filler} {text}\r\n") == f"{filler} {shown}\r\n"


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


def test_settings_in_lists_of_names_and_values_are_masked():
    """Kubernetes-style env lists and header pairs: the secret is under "value", or second in a pair."""
    settings = {
        "env": [{"name": "OPENAI_API_KEY", "value": SECRET}, {"name": "HOME", "value": "/root"}],
        "headers": [["Authorization", f"Token {SECRET}"], ["Accept", "application/json"]],
        "token_budget": 5,
    }
    assert mask_secrets(settings) == {
        "env": [{"name": "OPENAI_API_KEY", "value": MASK}, {"name": "HOME", "value": "/root"}],
        "headers": [["Authorization", MASK], ["Accept", "application/json"]],
        "token_budget": 5,
    }


def test_two_lines_of_text_are_no_setting_and_its_value():
    """A list of two warnings whose first names a secret-like file is text, not a header pair."""
    warnings = [
        "agent/secret_key: a hard link, refused (not read)",
        "verifier/test-stdout.txt: a hard link, refused (not read)",
    ]
    assert mask_secrets(warnings)[1] == warnings[1]


def test_every_spelling_is_masked_inside_json_text():
    """A log that is JSON holds the spellings escaped (`\\n` between lines, `\\"` for a quote): masked all the same."""
    text = json.dumps({"log": "\n".join(text for text, _ in TEXTS + ISSUE_SPELLINGS)})
    assert json.loads(mask_text(text))["log"] == "\n".join(shown for _, shown in TEXTS + ISSUE_SPELLINGS)


def test_a_long_text_is_masked_as_its_lines_are():
    """Past NUMPY_CHARS the triggers are found another way (numpy, at even and odd offsets, past characters
    that are not ASCII): the same text, line by line, gives the same result."""
    lines = [f"{'é' * (n % 3)}{' ' * (n % 2)}{text}" for n, (text, _) in enumerate(TEXTS + ISSUE_SPELLINGS * 3)]
    lines += ["İ İ export OPENAI_API_KEY=abc123xyz", "ascii only line with nothing in it"] * 50
    whole = "\n".join(lines)
    assert len(whole) > NUMPY_CHARS
    assert mask_text(whole) == "\n".join(mask_text(line) for line in lines)
    assert mask_texts(lines) == [mask_text(line) for line in lines]
    assert mask_texts([whole, "", "plain"]) == [mask_text(whole), "", "plain"]


def test_a_stream_is_masked_as_the_whole_text():
    text = "\n".join(text for text, _ in TEXTS + ISSUE_SPELLINGS).encode()
    for size in (1, 7, 64, 1000):
        pieces = [text[start : start + size] for start in range(0, len(text), size)]
        assert b"".join(mask_chunks(pieces)) == mask_text(text.decode()).encode()


def test_a_binary_stream_keeps_its_size_and_loses_its_secrets():
    data = b"\x00\xff\x10" + f"OPENAI_API_KEY={SECRET}\x00token: {SECRET}".encode() + bytes(range(256))
    masked = b"".join(mask_chunks([data[:20], data[20:]], same_length=True, encoding="latin-1"))
    assert len(masked) == len(data) and SECRET.encode() not in masked
    assert masked.startswith(b"\x00\xff\x10OPENAI_API_KEY=" + b"*" * len(SECRET)) and masked.endswith(bytes(range(256)))
