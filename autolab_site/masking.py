"""Secrets masked before trial text leaves the server: one rule, no Django.

A trial's config.json, a harness's parameters and a model's sampling
settings may carry an API key (in `agent.env`, a kwarg, a URL), and the
agent may print one into its outputs, logs and messages. The rule:

- a value is masked whole when its name, split into words (`_`, `-`, `.`,
  spaces, camelCase), ends with a secret word (key, apikey, token, secret,
  password, passwd, credential(s), auth, authorization, cookie), or holds
  one of the strong ones (secret, password, credential, ...) anywhere,
  unless its last word says it holds something else, a count or a place
  (`password_length`, `api_key_env`, `pad_token_id`); `max_tokens` holds
  "tokens", a count, and stays;
- inside any text, what looks like a secret is masked where it stands: the
  prefixes providers give their keys (`sk-`, `sk-ant-`, `xai-`, `AIza`,
  `hf_`, `ghp_`, `gsk_`, `AKIA`, `glpat-`, a JWT, ...); `Bearer X` and
  `Authorization: Token|ApiKey|Key|Basic X` (the scheme kept, the token
  masked); a URL's password, or a token as its user part
  (`https://user:pw@host`, `https://TOKEN@host`); `NAME=value`, `NAME:
  value`, `"NAME": "value"`, `{\\"NAME\\": \\"value\\"}`, `env["NAME"] =
  value`, `?NAME=value&` and `--NAME value` where NAME is a secret name;
  and `{"name": NAME, "value": X}` and `[NAME, X]` (env lists, headers).

What is kept: empty values, None, null and booleans ("not set" is worth
seeing), references to a secret rather than the secret (`$OPENAI_API_KEY`,
`os.environ["OPENAI_API_KEY"]`, `api_key=api_key`), code (`api_key: str`,
`key = buf;`, `f"{prefix}.weight"`), and prose ("a basic idea", "Token
expired", `--token-budget 5`).

The text is the agent's and may be megabytes. Every pattern holds one of a
few short pieces (TRIGGERS: `key`, `ecre` of secret, `://`, `sk-`, ...),
so the text is first searched for those (thirty finds for a short text; a
table lookup per pair of bytes with numpy for a long one), and each pattern
is then matched only where its piece stands, anchored: a log without any
costs one fast scan, and a training log that says "tokens" on every line
costs a few microseconds a line. `mask_texts` does the scan once for many
texts (an import's thousands of steps).
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Callable

MASK = "********"

SECRET_WORDS = frozenset({
    "key", "apikey", "token", "secret", "secrets", "password", "passwd", "credential", "credentials",
    "auth", "authorization", "cookie", "privatekey",
})
# Words that name a secret wherever they stand in a name (`SECRET_SEED`, `password_hash`); the others
# ("key", "token", "auth") only as its last word, or before "header": code is full of `pad_token_id`,
# `key_states` and `KEY_RANGE`, which hold no secret.
STRONG_SECRET_WORDS = SECRET_WORDS - {"key", "token", "auth"}
# A name's last word says what its value is: these hold no secret (`password_length`, `secret_name`).
NOT_SECRET_HEADS = frozenset({
    "budget", "count", "counts", "limit", "limits", "length", "len", "size", "max", "min", "type", "types", "kind",
    "name", "names", "path", "paths", "file", "files", "dir", "url", "uri", "endpoint", "env", "var", "usage",
    "id", "ids", "range", "bits", "hash",
})
# Account names before `@` in URLs (`ssh://git@github.com`): kept; any other user part alone may be a token.
ACCOUNT_NAMES = frozenset({
    "git", "root", "user", "admin", "postgres", "ubuntu", "ec2-user", "anonymous", "ftp", "oauth2", "x-access-token",
    "x-token-auth", "token", "guest", "nobody",
})
# Values that say a setting is unset, or are code rather than a value (`api_key: str` annotates a parameter).
NOTHING_SET = frozenset({
    "none", "null", "nil", "undefined", "true", "false", "lambda", "self", "cls",
    "str", "bytes", "int", "float", "bool", "dict", "list", "tuple", "set", "object", "any", "optional",
})
# Names so common as code's variables (`key = buf;`, `{key: value for ...}`) that a short word under them is code.
CODE_NAMES = frozenset({"key", "token", "auth"})

# What a pattern below holds (lower-cased), by what it stands for. The rarest piece of each: `ecre` of
# secret, `ssw` of password and passwd, `b_pat_` of github_pat_; a piece as common as `sk_` (task_)
# would have most lines of a log read again.
NAME_TRIGGERS = ("key", "token", "ecre", "ssw", "edent", "uth", "okie")
# Key prefixes, with where the key starts before the piece (`k_live_` is 1 into `sk_live_`).
KEY_TRIGGERS = {
    "sk-": 0, "k_live_": 1, "k_test_": 1, "xai-": 0, "gsk_": 0, "aiza": 0, "hf_": 0, "ghp_": 0, "gho_": 0,
    "ghu_": 0, "ghs_": 0, "ghr_": 0, "b_pat_": 5, "glpat-": 0, "pypi-": 0, "npm_": 0, "akia": 0, "asia": 0,
    "xox": 0, "r8_": 0, "eyj": 0,
}
TRIGGERS = (*NAME_TRIGGERS, "bearer", "://", *KEY_TRIGGERS)
_TRIGGER_BYTES = tuple(word.encode() for word in TRIGGERS)

_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")

# Key shapes providers hand out. At least 12 characters after the prefix, so that prose ("sk-learn",
# "hf_hub") is left alone; where the key may hold dashes, a run of 16 letters and digits in it, which a
# key has and a model's name (`xai-grok-4-20-reasoning`) has not.
_RANDOM_RUN = r"(?=[A-Za-z0-9_\-]*?[A-Za-z0-9]{16})[A-Za-z0-9_\-]{16,}"
_KEY_SHAPES = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=\\[ntr]))(?:"
    rf"sk-(?:ant-|proj-|or-)?{_RANDOM_RUN}"
    r"|sk_(?:live|test)_[A-Za-z0-9]{12,}"
    rf"|xai-{_RANDOM_RUN}"
    r"|gsk_[A-Za-z0-9]{12,}"
    r"|AIza[0-9A-Za-z_\-]{20,}"
    r"|hf_[A-Za-z0-9]{12,}"
    r"|gh[pousr]_[A-Za-z0-9]{12,}"
    r"|github_pat_[A-Za-z0-9_]{12,}"
    rf"|glpat-{_RANDOM_RUN}"
    r"|pypi-[A-Za-z0-9_\-]{32,}"
    r"|npm_[A-Za-z0-9]{32,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    rf"|xox[abpr]-{_RANDOM_RUN}"
    r"|r8_[A-Za-z0-9]{12,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r")"
)

# The pieces of the patterns. Every pattern stays on one line (blanks are spaces and tabs), and a
# backslash escape (`\n` in JSON text, `\"` a quote inside a string) ends a value as the line end would.
_BLANK = r"[ \t]*"
_QUOTE = r"""(?:\\*["'])"""
# A value: quoted (also with escaped quotes, as in JSON inside JSON, and with a Python string prefix),
# or a run up to a blank, a delimiter or an escape, which may start with an auth scheme (`Token X`).
_QUOTED = r"""(?:[rbfuRBFU]{0,2}(?:\\+"[^"\n]*?\\+"|"[^"\n]*"|'[^'\n]*'))"""
_SCHEME = r"(?i:bearer|basic|token|apikey|api-key|key|digest)"
# What ends a bare value: a blank, a delimiter, a quote, a control character (a binary file's strings
# stand between NULs), and a backslash that escapes (one that does not is part of the value).
_STOP = r"""\s,;}\])"'\\\x00-\x1f\x7f"""
_NOT_ESCAPE = r"""\\(?![ntr"'\\])"""
_BARE_CHAR = rf"(?:[^{_STOP}]|{_NOT_ESCAPE})"
_BARE = rf"""(?:{_SCHEME}[ \t]+)?(?:[^{_STOP}{{\[(]|{_NOT_ESCAPE}){_BARE_CHAR}*"""
_VALUE = rf"(?P<value>{_QUOTED}|{_BARE})"

# A name is a run of these; its start is looked for back from the trigger, at most NAME_CHARS back.
_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
NAME_CHARS = 200
# What may stand before a name for it to be one (not the end of another word, not inside a quote).
_NOT_BEFORE_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-\"'\\")
# After a name: NAME=value, NAME: value, "NAME": value, env["NAME"] = value.
_ASSIGNMENT_TAIL = re.compile(rf"""{_QUOTE}?\]?{_BLANK}[=:]{_BLANK}{_VALUE}""")
# After a flag's name: --api-key X, --token=X (the value never a next flag).
_FLAG_TAIL = re.compile(rf"""(?:=|[ \t]+)(?P<value>{_QUOTED}|(?:[^{_STOP}\-]|{_NOT_ESCAPE}){_BARE_CHAR}*)""")
# Before a quoted name: {"name": NAME, "value": X} (or "key", "header"), and [NAME, X].
_LABEL_BEFORE = re.compile(rf"""{_QUOTE}?(?i:name|key|header){_QUOTE}?{_BLANK}[:=]{_BLANK}\Z""")
_NAMED_VALUE_TAIL = re.compile(rf"""{_BLANK},{_BLANK}{_QUOTE}?(?i:value){_QUOTE}?{_BLANK}[:=]{_BLANK}{_VALUE}""")
_PAIR_BEFORE = re.compile(rf"[\[(]{_BLANK}\Z")
_PAIR_TAIL = re.compile(rf"""{_BLANK},{_BLANK}(?P<value>{_QUOTED})(?={_BLANK}[\])])""")
_BEARER = re.compile(r"(?i)bearer[ \t]+(?P<value>[A-Za-z0-9._~+/=\-]{8,})")
_SCHEME_RUN = re.compile(r"[A-Za-z0-9+.\-]*")
_USERINFO = re.compile(r"""(?P<user>[^\s/:@?#"'<>\\]+)(?::(?P<password>[^\s/@?#"'<>\\]+))?@""")
# A value that refers to a secret rather than holding it: $VAR, ${VAR}, env["VAR"], os.getenv("VAR"), a call.
_REFERENCE = re.compile(r"""\$\{?[A-Za-z_]|[A-Za-z_][\w.]*[(\[]""")
_ENV_OR_HEADER_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z][a-z]*(?:-[A-Z][a-z]*)*")
_FIELD_NAME = re.compile(r"[a-z_][a-z0-9_]*")
# A short lower-case word: a variable or a type in code (`key = buf;`, `key: bytes`), or prose ("key: all-zero").
_CODE_WORD = re.compile(r"[a-z][a-z_\-]{0,11}")
_CODE_NAME = re.compile(r"(?:[a-z_][a-z0-9_]*\.)*[a-z_][a-z0-9_]*")
_SCHEME_VALUE = re.compile(rf"(?P<scheme>{_SCHEME}[ \t]+)(?P<token>\S.*)", re.DOTALL)
_QUOTES = re.compile(r"""(?s)([rbfuRBFU]{0,2}\\*["'])(.*?)(\\*["'])""")

Cover = Callable[[str], str]


def is_secret_name(name: object) -> bool:
    """Whether a setting of this name holds a secret (its words, not its letters: `max_tokens` is no token)."""
    return isinstance(name, str) and _is_secret_name(name)


@functools.lru_cache(maxsize=4096)  # an import asks of the same few keys thousands of times
def _is_secret_name(name: str) -> bool:
    words = [word.lower() for word in _WORD_SPLIT.split(name) if word]
    if not words:
        return False
    last = words[-1]
    if last in SECRET_WORDS:
        return True
    if len(words) > 1 and last in ("header", "headers"):
        return any(word in SECRET_WORDS for word in words)  # auth_header, token_headers
    return last not in NOT_SECRET_HEADS and any(word in STRONG_SECRET_WORDS for word in words)


_PAIR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,99}")


def _is_pair(name: object, second: str) -> bool:
    """Whether a pair [name, second] is a setting and its value (["Authorization", "Token X"], ("OPENAI_API_KEY", X)).

    Not a list of fields (["api_key", "model"]): a lower-case name followed by a lower-case word. Not two
    lines of text either (["agent/secret_key: refused", "..."]): a setting's name is one word.
    """
    if not isinstance(name, str) or not _PAIR_NAME.fullmatch(name) or not is_secret_name(name):
        return False
    return not (name.islower() and "-" not in name and _FIELD_NAME.fullmatch(second.strip("\\\"'")))


def _nothing_to_hide(value: Any) -> bool:
    return value is None or isinstance(value, bool) or value == "" or value == {} or value == []


def _kept(inside: str, quoted: bool = True, weak: bool = False) -> bool:
    """Whether a secret-named setting's value is no secret: unset, masked already, or a reference to one.

    A reference: `$VAR`, a call or subscript (`os.getenv(...)`, `env[...]`), the name of a variable
    or header that holds a secret (`OPENAI_API_KEY`, `Authorization`), and, unquoted (code), a
    variable named like one (`api_key=api_key`, `token=self.token`).
    """
    bare = inside.strip()
    if bare == "" or bare.lower() in NOTHING_SET or set(bare) <= {"*"} or _REFERENCE.match(bare):
        return True
    if not quoted and weak and _CODE_WORD.fullmatch(bare):
        return True  # key = buf, key: bytes, {key: value for ...}: code, under a name as common as key
    if not is_secret_name(bare):
        return False
    return bool(_ENV_OR_HEADER_NAME.fullmatch(bare) or (not quoted and _CODE_NAME.fullmatch(bare)))


def _hidden(value: str, cover: Cover, weak: bool = False) -> str | None:
    """`value` (as written, quotes and all) with the secret in it covered; None when it holds none.

    `weak`: it stands under a name as common in code as `key` (CODE_NAMES)."""
    match = _QUOTES.fullmatch(value)
    opening, inside, closing = (match[1], match[2], match[3]) if match and match[1][-1] == match[3][-1] else ("", value, "")
    if "f" in opening.lower() and "{" in inside:
        return None  # an f-string's template (`key = f"{prefix}.weight"`): code, not a value
    scheme = _SCHEME_VALUE.fullmatch(inside)
    if scheme is not None:
        if _kept(scheme["token"], bool(opening), weak):
            return None
        return f"{opening}{scheme['scheme']}{cover(scheme['token'])}{closing}"
    if _kept(inside, bool(opening), weak):
        return None
    return f"{opening}{cover(inside)}{closing}"


def _mask_star(secret: str) -> str:
    return MASK


def _same_length(secret: str) -> str:
    return "*" * len(secret)


# -- Finding the triggers ----------------------------------------------------------------------------


def _lowered(text: str) -> str:
    """`text` lower-cased, each character still where it was (İ alone lowers to two)."""
    return text.replace("\u0130", "I").lower() if "\u0130" in text else text.lower()


def _trigger_hits(text: str) -> list[tuple[int, str]]:
    """(where, which) of every trigger in `text` (any case), in order.

    A short text: each trigger looked for with str.find. A long one: numpy
    finds the places where the first two characters of some trigger stand
    (a table of the 65,536 pairs of bytes, read at even and at odd
    offsets), keeps those whose third fits too, and only these few are
    compared with the triggers. Thirty finds over a long text cost five
    times as much, and one regex of them all stops at every letter a
    trigger starts with.
    """
    if len(text) < NUMPY_CHARS:
        lowered = _lowered(text)
        hits = []
        for word in TRIGGERS:
            found = lowered.find(word)
            while found >= 0:
                hits.append((found, word))
                found = lowered.find(word, found + 1)
        hits.sort()
        return hits
    import numpy as np

    if text.isascii():
        data = text.encode("ascii").lower()
    else:
        # One byte a character, where it stands: what is not ASCII is no trigger's.
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        data = np.where(codes < 128, codes, 0).astype(np.uint8).tobytes().lower()
    pairs_table, group_of_pair, third_table = _tables()
    size = len(data)
    even = np.frombuffer(data, dtype=">u2", count=size // 2).astype(np.uint16)
    odd = np.frombuffer(data, dtype=">u2", offset=1, count=(size - 1) // 2).astype(np.uint16)
    at_even = np.flatnonzero(np.take(pairs_table, even))
    at_odd = np.flatnonzero(np.take(pairs_table, odd))
    starts = np.concatenate((at_even * 2, at_odd * 2 + 1))
    pairs = np.concatenate((even[at_even], odd[at_odd]))
    inside = starts + 2 < size
    starts, pairs = starts[inside], pairs[inside]
    thirds = np.frombuffer(data, dtype=np.uint8)[starts + 2]
    fits = third_table[np.take(group_of_pair, pairs), thirds]
    hits = []
    for start in np.sort(starts[fits]).tolist():
        for word in _BY_PREFIX[data[start : start + 3]]:
            if data.startswith(word, start):
                hits.append((start, word.decode()))
    return hits


# Texts at least this long are searched for triggers with numpy (a call's set-up costs a few finds).
NUMPY_CHARS = 4096
_BY_PREFIX: dict[bytes, list[bytes]] = {}
for _word in _TRIGGER_BYTES:
    _BY_PREFIX.setdefault(_word[:3], []).append(_word)
_TABLES: list = []


def _tables():
    """numpy's tables of the triggers' first bytes, made once: which pairs start one, and which third bytes follow."""
    if not _TABLES:
        import numpy as np

        pairs = sorted({word[0] << 8 | word[1] for word in _TRIGGER_BYTES})
        pairs_table = np.zeros(1 << 16, dtype=bool)
        pairs_table[pairs] = True
        group_of_pair = np.zeros(1 << 16, dtype=np.intp)
        group_of_pair[pairs] = np.arange(len(pairs))
        third_table = np.zeros((len(pairs), 256), dtype=bool)
        for word in _TRIGGER_BYTES:
            third_table[pairs.index(word[0] << 8 | word[1]), word[2]] = True
        _TABLES.extend([pairs_table, group_of_pair, third_table])
    return _TABLES


# -- The patterns, where their triggers stand --------------------------------------------------------


def _escape_before(text: str, at: int) -> bool:
    """Whether an escape (`\\n`, `\\t`, `\\r`, as JSON writes a line break) ends just before `at`."""
    return at >= 2 and text[at - 1] in "ntr" and text[at - 2] == "\\"


def _run_before(text: str, at: int, run: re.Pattern) -> int:
    """How many characters just before `at` belong to a run of `run` (at most NAME_CHARS)."""
    return run.match(text[max(at - NAME_CHARS, 0) : at][::-1]).end()


def _name_edit(text: str, at: int, cover: Cover) -> tuple[tuple[int, int, str] | None, int]:
    """(the edit a secret word at `at` makes, where what it read ends): an assignment, a flag, a named value or a pair.

    What it read (the name, and its value when it has one) is read once: a secret word in it
    (`api_key=${OPENAI_API_KEY:-}`) starts nothing more.
    """
    start = at - _run_before(text, at, _NAME_RUN)
    # After an escaped line break (`\\nOPENAI_API_KEY=...` in JSON text) the name starts past its letter.
    after_escape = start < at and _escape_before(text, start + 1)
    if after_escape:
        start += 1
    end = _NAME_RUN.match(text, at).end()
    name = text[start:end]
    if name.startswith("-"):
        edit = _flag_edit(text, start, end, cover, after_escape)
        return edit, end if edit is None else edit[1]
    if not is_secret_name(name):
        return None, end
    quote = ""
    if start and text[start - 1] in "\"'" and not after_escape:
        quote_start = start - 1
        while quote_start and text[quote_start - 1] == "\\":
            quote_start -= 1
        quote = text[quote_start:start]
    quote_start = start - len(quote)
    if quote and text.startswith(quote, end):
        before = text[max(quote_start - 64, 0) : quote_start]
        after = end + len(quote)
        if _LABEL_BEFORE.search(before):
            tail = _NAMED_VALUE_TAIL.match(text, after)
            if tail:
                return _value_edit(tail, cover), tail.end()
        if _PAIR_BEFORE.search(before):
            tail = _PAIR_TAIL.match(text, after)
            if tail and _is_pair(name, tail["value"]):
                return _value_edit(tail, cover), tail.end()
    if quote_start and text[quote_start - 1] in _NOT_BEFORE_NAME and not (after_escape or _escape_before(text, quote_start)):
        return None, end
    tail = _ASSIGNMENT_TAIL.match(text, end)
    if tail is None:
        return None, end
    value_start, value_end = tail.span("value")
    value = tail["value"]
    if quote_start and text[quote_start - 1] in "?&" and not value.startswith(("'", '"')):
        # A URL's query: the value ends at the next parameter.
        cut = re.search(r"[&#]", value)
        if cut:
            value, value_end = value[: cut.start()], value_start + cut.start()
    hidden = _hidden(value, cover, weak=name.lower() in CODE_NAMES)
    return (None if hidden is None else (value_start, value_end, hidden)), value_end


def _flag_edit(text: str, start: int, end: int, cover: Cover, after_escape: bool) -> tuple[int, int, str] | None:
    """--api-key X, --token=X: a flag named like a secret (but --no-auth, --use-auth-token take no value)."""
    name = text[start:end]
    dashes = len(name) - len(name.lstrip("-"))
    name = name[dashes:]
    if dashes > 2 or not name or (start and not after_escape and (text[start - 1].isalnum() or text[start - 1] == "_")):
        return None
    words = [word.lower() for word in _WORD_SPLIT.split(name) if word]
    if not is_secret_name(name) or (words and words[0] in ("no", "use", "enable", "disable", "with", "without")):
        return None
    tail = _FLAG_TAIL.match(text, end)
    return _value_edit(tail, cover) if tail else None


def _value_edit(match: re.Match, cover: Cover) -> tuple[int, int, str] | None:
    hidden = _hidden(match["value"], cover)
    return None if hidden is None else (*match.span("value"), hidden)


def _url_edit(text: str, at: int, cover: Cover) -> tuple[int, int, str] | None:
    """https://user:PASSWORD@host, https://TOKEN@host (an account name alone is kept)."""
    scheme = _run_before(text, at, _SCHEME_RUN)
    if not scheme or not text[at - scheme].isalpha():
        return None
    match = _USERINFO.match(text, at + 3)
    if match is None:
        return None
    if match["password"] is not None:
        return (*match.span("password"), cover(match["password"]))
    user = match["user"]
    if user.lower() in ACCOUNT_NAMES or set(user) <= {"*"}:
        return None
    return (*match.span("user"), cover(user))


def _edits(text: str, hits: Iterable[tuple[int, str]], cover: Cover) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of every secret the triggers at `hits` lead to, in order, none overlapping."""
    edits = []
    name_end = -1
    for at, word in hits:
        if word in KEY_TRIGGERS:
            match = _KEY_SHAPES.match(text, at - KEY_TRIGGERS[word])
            edit = (*match.span(), cover(match[0])) if match else None
        elif word == "bearer":
            before = text[at - 1] if at else ""
            inside_word = (before.isalnum() or before == "_") and not _escape_before(text, at)
            match = None if inside_word else _BEARER.match(text, at)
            edit = (*match.span("value"), cover(match["value"])) if match else None
        elif word == "://":
            edit = _url_edit(text, at, cover)
        elif at < name_end:
            continue  # another secret word of a name read already
        else:
            edit, name_end = _name_edit(text, at, cover)
        if edit is not None:
            edits.append(edit)
    edits.sort(key=lambda edit: (edit[0], -edit[1]))
    kept: list[tuple[int, int, str]] = []
    for edit in edits:
        if not kept or edit[0] >= kept[-1][1]:
            kept.append(edit)
    return kept


def _applied(text: str, edits: list[tuple[int, int, str]]) -> str:
    if not edits:
        return text
    pieces, done = [], 0
    for start, end, replacement in edits:
        pieces += [text[done:start], replacement]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


# -- Masking ------------------------------------------------------------------------------------------


def mask_text(text: str, *, same_length: bool = False) -> str:
    """The text with every secret the rule finds masked (`same_length`: each covered by as many `*`)."""
    if not text:
        return text
    cover = _same_length if same_length else _mask_star
    return _applied(text, _edits(text, _trigger_hits(text), cover))


def mask_texts(texts: Sequence[str], *, same_length: bool = False) -> list[str]:
    """mask_text of each text, the triggers looked for once in all of them (an import's thousands of short texts)."""
    cover = _same_length if same_length else _mask_star
    joined = "\n".join(texts)
    hits = _trigger_hits(joined) if joined else []
    result = list(texts)
    if not hits:
        return result
    starts, offset = [], 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + 1
    by_text: dict[int, list[tuple[int, str]]] = {}
    for at, word in hits:
        index = bisect.bisect_right(starts, at) - 1
        by_text.setdefault(index, []).append((at - starts[index], word))
    for index, text_hits in by_text.items():
        result[index] = _applied(texts[index], _edits(texts[index], text_hits, cover))
    return result


def mask_secrets(value: Any, name: object = None) -> Any:
    """A copy of a JSON-like value with secrets masked (by the name they are under, or their shape)."""
    return mask_values([value], [name])[0]


def mask_values(values: Sequence[Any], names: Sequence[object] | None = None) -> list[Any]:
    """mask_secrets of each JSON-like value (under its name, if any), their text masked by one mask_texts.

    A value that holds nothing to mask is given back as it is (the same object), not copied.
    """
    texts: list[str] = []
    spans, by_name = [], []
    for index, value in enumerate(values):
        start = len(texts)
        by_name.append(_texts_of(value, names[index] if names else None, texts))
        spans.append((start, len(texts)))
    masked = mask_texts(texts)
    result = []
    for index, value in enumerate(values):
        start, end = spans[index]
        if not by_name[index] and all(masked[at] is texts[at] for at in range(start, end)):
            result.append(value)
        else:
            pieces = iter(masked[start:end])
            result.append(_walk(value, names[index] if names else None, lambda text: next(pieces)))
    return result


def _texts_of(value: Any, name: object, texts: list[str]) -> bool:
    """Append the strings _walk gives `text_of`, in its order; whether a name masks something (a rebuild is needed)."""
    if name is not None and is_secret_name(name) and not _nothing_to_hide(value):
        return True
    if isinstance(value, str):
        texts.append(value)
        return False
    if isinstance(value, Mapping):
        named = False
        for key, item in value.items():
            named |= _texts_of(item, key, texts)
        return named or any(is_secret_name(value.get(label)) for label in ("name", "key", "header"))
    if isinstance(value, (list, tuple)):
        named = False
        for item in value:
            named |= _texts_of(item, None, texts)
        return named or len(value) == 2 or isinstance(value, tuple)
    return False


def _walk(value: Any, name: object, text_of: Callable[[str], Any]) -> Any:
    """`value` rebuilt with secrets masked by name, each string given to `text_of` (in one order, every walk)."""
    if name is not None and is_secret_name(name) and not _nothing_to_hide(value):
        return MASK
    if isinstance(value, str):
        return text_of(value)
    if isinstance(value, Mapping):
        masked = {key: _walk(item, key, text_of) for key, item in value.items()}
        # {"name": "OPENAI_API_KEY", "value": X}: an env list's entry, a header's.
        for label in ("name", "key", "header"):
            if is_secret_name(value.get(label)) and "value" in masked and not _nothing_to_hide(value["value"]):
                masked["value"] = MASK
        return masked
    if isinstance(value, (list, tuple)):
        items = [_walk(item, None, text_of) for item in value]
        if len(value) == 2 and isinstance(value[1], str) and _is_pair(value[0], value[1]) and not _kept(value[1]):
            items[1] = MASK  # a pair: ["Authorization", "Token X"], ("OPENAI_API_KEY", "X")
        return items
    return value


# A line held back longer than this while a stream waits for its end is masked as it stands.
HELD_LINE = 1024 * 1024


def mask_chunks(chunks: Iterable[bytes], *, same_length: bool = False, encoding: str = "utf-8") -> Iterator[bytes]:
    """Masked text of a stream of bytes (a file served a piece at a time), whole lines at a time.

    A secret never spans lines (every pattern stays on one), so each piece
    is cut after its last newline and the rest waits for the next; a line
    longer than HELD_LINE is cut at its last blank, else where it stands.
    `encoding="latin-1"` reads any bytes one character each: with
    `same_length` a binary file keeps its size and layout.
    """
    held = b""
    for chunk in chunks:
        if not chunk:
            continue
        held += chunk
        cut = held.rfind(b"\n") + 1
        if not cut and len(held) > HELD_LINE:
            cut = max(held.rfind(b" "), held.rfind(b"\t")) + 1 or len(held)
        if cut:
            yield _masked_bytes(held[:cut], same_length, encoding)
            held = held[cut:]
    if held:
        yield _masked_bytes(held, same_length, encoding)


def _masked_bytes(data: bytes, same_length: bool, encoding: str) -> bytes:
    errors = "surrogateescape" if encoding == "utf-8" else "strict"
    return mask_text(data.decode(encoding, errors), same_length=same_length).encode(encoding, errors)
