"""Secrets masked before a page shows settings: one rule, no Django.

A trial's config.json, a harness's parameters and a model's sampling
settings may carry an API key (in `agent.env`, a kwarg, a URL). The rule:

- a value is masked whole when its name, split into words (`_`, `-`, `.`,
  spaces, camelCase), holds a secret word: key, apikey, token, secret,
  password, passwd, credential(s), auth, authorization, cookie
  (`max_tokens` and `n_output_tokens` hold "tokens", a count, and stay);
- inside any text, what looks like an API key is masked where it stands:
  the prefixes providers give their keys (`sk-`, `sk-ant-`, `xai-`, `AIza`,
  `hf_`, `ghp_`, `gsk_`, `AKIA`, ...), a `Bearer` token, the password of a
  URL (`https://user:pw@host`), and `NAME=value` / `NAME: value` /
  `"NAME": "value"` where NAME is a secret name (a TOML or env line).

Empty values, None and booleans are not secrets and are shown as they are:
"not set" is worth seeing.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "********"

SECRET_WORDS = frozenset({
    "key", "apikey", "token", "secret", "secrets", "password", "passwd", "credential", "credentials",
    "auth", "authorization", "cookie", "privatekey",
})

_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")

# Key shapes providers hand out, and bearer tokens. At least 12 characters
# after the prefix, so that prose ("sk-learn", "hf_hub") is left alone.
_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{12,}"
    r"|xai-[A-Za-z0-9_\-]{12,}"
    r"|gsk_[A-Za-z0-9]{12,}"
    r"|AIza[0-9A-Za-z_\-]{20,}"
    r"|hf_[A-Za-z0-9]{12,}"
    r"|gh[pousr]_[A-Za-z0-9]{12,}"
    r"|github_pat_[A-Za-z0-9_]{12,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|r8_[A-Za-z0-9]{12,}"
    r")"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}")
# Each pattern starts only where its run of characters starts (the lookbehinds): the agent writes
# the text, and a megabyte without a space must cost one pass, not one per character.
_URL_PASSWORD = re.compile(r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*://[^\s/:@]*):[^\s/@]+@")
# NAME=value, NAME: value, "NAME": "value", NAME = "value" (env lines, TOML, YAML, JSON text).
_ASSIGNMENT = re.compile(
    r"""(?<![A-Za-z0-9_.\-"'])(?P<name>["']?[A-Za-z_][A-Za-z0-9_.\-]*["']?)(?P<sep>\s*[=:]\s*)(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s,;}\]]+)"""
)


def is_secret_name(name: object) -> bool:
    """Whether a setting of this name holds a secret (its words, not its letters: `max_tokens` is no token)."""
    if not isinstance(name, str):
        return False
    words = [word.lower() for word in _WORD_SPLIT.split(name) if word]
    return any(word in SECRET_WORDS for word in words) or name.lower().replace("-", "_").endswith("_api_key")


def _nothing_to_hide(value: Any) -> bool:
    return value is None or isinstance(value, bool) or value == "" or value == {} or value == []


def mask_text(text: str) -> str:
    """The text with every key-shaped value, bearer token, URL password and secret assignment masked."""
    if not text:
        return text

    def assignment(match: re.Match) -> str:
        if not is_secret_name(match["name"].strip("\"'")):
            return match[0]
        value = match["value"]
        quote = value[0] if value[:1] in ("'", '"') else ""
        if value.strip("\"'") == "" or value.lower() in ("bearer", "basic"):  # the token after it is masked below
            return match[0]
        return f"{match['name']}{match['sep']}{quote}{MASK}{quote}"

    text = _BEARER.sub(lambda m: f"{m[1]} {MASK}", text)
    text = _ASSIGNMENT.sub(assignment, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m[1]}:{MASK}@", text)
    return _KEY_SHAPES.sub(MASK, text)


def mask_secrets(value: Any, name: object = None) -> Any:
    """A copy of a JSON-like value with secrets masked (by the name they are under, or their shape)."""
    if name is not None and is_secret_name(name) and not _nothing_to_hide(value):
        return MASK
    if isinstance(value, Mapping):
        return {key: mask_secrets(item, key) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_secrets(item) for item in value]
    if isinstance(value, str):
        return mask_text(value)
    return value
