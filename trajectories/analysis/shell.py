"""Shell text as agents type it, split into simple commands.

Agents batch several commands into one tool call: ``cd /app && make &&
./bench``, several lines, ``cmd; cmd``, and heredocs whose bodies are whole
files. Step classification and edit reconstruction need each command on its
own, with a heredoc's body attached to the command that reads it and never
split itself. This is a small, forgiving scanner, not a shell: anything it
does not understand stays inside the current command.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

# Words that only prefix the real program ("sudo timeout 600 python x.py").
_WRAPPERS = {"sudo", "time", "nohup", "exec", "command", "builtin", "stdbuf", "nice", "ionice", "chrt", "taskset"}
# Shell keywords left at the front of a piece after splitting a loop or an if.
_KEYWORDS = {"do", "then", "else", "elif", "if", "while", "until", "!", "{", "}", "(", ")", "done", "fi"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT = re.compile(r"^(\d*|&)(>>?|>\||<<<|<<-?|<>|<|>&|<&)$")


@dataclass
class Command:
    """One simple command or pipeline ("python3 x.py 2>&1 | tee log")."""

    text: str  # as typed, heredoc bodies removed
    start: int = 0  # offset of `text` in the tool call's shell text
    heredoc: str | None = None  # body of the first heredoc the command reads
    heredoc_delimiter: str = ""
    stages: list[list[str]] = field(default_factory=list)  # words of each pipeline stage, redirections removed
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator, target), e.g. (">", "/app/x.py")
    # Derived facts computed once per command by other modules (e.g. its file writes).
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    # `program`, `words`, `stage_words()` and `output_files` are asked for by every
    # step-kind rule; they are computed once, so `stages` and `redirects` must not
    # change after they are first read, and the lists returned must not be modified.

    @cached_property
    def program(self) -> str:
        """The first stage's program name without its directory ("python3")."""
        words = self.words
        return words[0].rsplit("/", 1)[-1] if words else ""

    @cached_property
    def words(self) -> list[str]:
        """The first stage's words with env assignments and wrappers dropped."""
        return self._stage_words[0] if self.stages else []

    def stage_words(self) -> list[list[str]]:
        """Every stage's words with wrappers dropped."""
        return self._stage_words

    @cached_property
    def _stage_words(self) -> list[list[str]]:
        return [strip_wrappers(stage) for stage in self.stages]

    @cached_property
    def output_files(self) -> list[tuple[str, str]]:
        """(operator, path) of `>`/`>>` redirections to real files."""
        return [
            (op, target)
            for op, target in self.redirects
            if op.lstrip("0123456789&") in (">", ">>", ">|") and target and not target.startswith(("/dev/", "&"))
            and not target.isdigit()
        ]


def strip_wrappers(words: list[str]) -> list[str]:
    """Drop `FOO=1`, `sudo`, `timeout 60`, `env X=1`, shell keywords in front of a program."""
    i = 0
    while i < len(words):
        word = words[i]
        if word in _KEYWORDS or _ASSIGNMENT.match(word):
            i += 1
        elif word in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                # nice -n 10, stdbuf -oL: skip the option and a separate value.
                i += 2 if words[i] in ("-n", "-c") and i + 1 < len(words) else 1
        elif word == "timeout":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in ("-s", "-k", "--signal", "--kill-after") else 1
            i += 1  # the duration
        elif word == "env":
            i += 1
            while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT.match(words[i])):
                i += 1
        else:
            break
    return words[i:]


# Runs of characters that mean nothing to the splitter, outside quotes; taken in one step.
_PLAIN_RUN = re.compile(r"[^'\"`\\#()<\n;&|]+")
# Inside double quotes: everything up to the closing quote or a backslash.
_DOUBLE_QUOTED_RUN = re.compile(r'[^"\\]+')
# Without any of these, text splits into commands only at newlines.
_SPLIT_SPECIAL = re.compile(r"['\"`\\#()<;&|]")
_HEREDOC_START = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z0-9_.\-]+)\2")


def split_commands(text: str) -> list[Command]:
    """The simple commands of `text`, split on newlines, `;`, `&&`, `||`, `&`.

    Quotes, `$(...)`, backslash-newline continuations and heredoc bodies
    never split a command; `#` comments are dropped.
    """
    commands: list[Command] = []
    if not text:
        return commands
    if _SPLIT_SPECIAL.search(text) is None:
        return _plain_lines(text)
    buf: list[str] = []  # pieces of the command being built, never empty strings
    start = 0
    i, n = 0, len(text)
    quote = ""
    depth = 0  # $( ... ) and ( ... ) nesting
    # Heredocs opened on the current line: (index of the owning command, delimiter, strip tabs).
    # The owner is the command being built when `<<` was seen; its body is read at the newline.
    heredocs: list[tuple[int, str, bool]] = []

    def flush(end: int) -> None:
        nonlocal buf, start
        raw = "".join(buf)
        buf = []
        stripped = raw.strip()
        if stripped:
            command = Command(text=stripped, start=start + (len(raw) - len(raw.lstrip())))
            _tokenise_into(command)
            commands.append(command)
        start = end

    while i < n:
        if quote:
            i, quote = _quoted(text, i, quote, buf)
            continue
        plain = _PLAIN_RUN.match(text, i)
        if plain is not None:
            buf.append(plain.group())
            i = plain.end()
            continue
        ch = text[i]
        if ch in ("'", '"', "`"):
            quote = ch
            buf.append(ch)
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":  # line continuation
                buf.append(" ")
                i += 2
                continue
            buf.append(text[i : i + 2])
            i += 2
            continue
        if ch == "#" and depth == 0 and (not buf or buf[-1][-1] in (" ", "\t", ";", "&", "|", "(")):
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and ch == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
            match = _HEREDOC_START.match(text, i)
            if match:
                heredocs.append((len(commands), match.group(3), match.group(1) == "-"))
                buf.append(match.group(0))
                i = match.end()
                continue
        if depth == 0 and ch == "\n":
            flush(i + 1)
            i += 1
            for owner, delimiter, strip_tabs in heredocs:
                body, i = _read_heredoc(text, i, delimiter, strip_tabs)
                if owner < len(commands) and commands[owner].heredoc is None:
                    commands[owner].heredoc = body
                    commands[owner].heredoc_delimiter = delimiter
            heredocs = []
            start = i
            continue
        if depth == 0 and ch in ";&":
            if text.startswith("&&", i) or text.startswith("||", i):
                flush(i + 2)
                i += 2
                continue
            if ch == ";" and not text.startswith(";;", i):
                flush(i + 1)
                i += 1
                continue
            prev = buf[-1][-1] if buf else ""
            if ch == "&" and prev not in (">", "<") and not text.startswith("&>", i):
                flush(i + 1)
                i += 1
                continue
        if depth == 0 and ch == "|" and text.startswith("||", i):
            flush(i + 2)
            i += 2
            continue
        buf.append(ch)
        i += 1
    flush(n)
    return commands


def _plain_lines(text: str) -> list[Command]:
    """One command per non-blank line: what `split_commands` makes of text without quotes or operators."""
    commands: list[Command] = []
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            command = Command(text=stripped, start=offset + len(line) - len(line.lstrip()))
            _tokenise_into(command)
            commands.append(command)
        offset += len(line) + 1
    return commands


def _quoted(text: str, i: int, quote: str, buf: list[str]) -> tuple[int, str]:
    """Copy quoted text from `i` into `buf`: up to and including the closing quote, or to the end.

    Returns the index after what was copied and the quote still open ("" once closed).
    """
    if quote != '"':
        end = text.find(quote, i)
        if end == -1:
            buf.append(text[i:])
            return len(text), quote
        buf.append(text[i : end + 1])
        return end + 1, ""
    n = len(text)
    while i < n:
        run = _DOUBLE_QUOTED_RUN.match(text, i)
        if run is not None:
            buf.append(run.group())
            i = run.end()
            continue
        ch = text[i]
        if ch == '"':
            buf.append(ch)
            return i + 1, ""
        # A backslash escapes the next character, whatever it is.
        buf.append(text[i : i + 2])
        i += 2
    return n, quote


def _read_heredoc(text: str, i: int, delimiter: str, strip_tabs: bool) -> tuple[str, int]:
    """The body starting at `i` up to the delimiter line, and the index after that line.

    The delimiter line is the first line that is the delimiter (after leading
    tabs with `<<-`, before trailing carriage returns); without one, the body
    runs to the end of the text.
    """
    if i > len(text):
        return "", len(text) + 1
    closing = _delimiter_line(text, i, delimiter, strip_tabs)
    if closing is None:
        body, after = text[i:] + "\n", len(text) + 1
    else:
        body, after = text[i : closing[0]], closing[1] + 1
    if strip_tabs and body:
        body = "".join(line.lstrip("\t") + "\n" for line in body[:-1].split("\n"))
    return body, after


def _delimiter_line(text: str, i: int, delimiter: str, strip_tabs: bool) -> tuple[int, int] | None:
    """(start, end) of the first line from `i` on that is the delimiter, without its newline.

    Such a line is the delimiter, after tabs with `<<-`, before carriage
    returns. The delimiter is looked for as a string, then its line checked.
    """
    n = len(text)
    at = text.find(delimiter, i)
    while at != -1:
        line_start = text.rfind("\n", 0, at) + 1
        before = text[line_start:at]
        if not before or (strip_tabs and not before.strip("\t")):
            end = at + len(delimiter)
            while end < n and text[end] == "\r":
                end += 1
            if end == n or text[end] == "\n":
                return line_start, end
        at = text.find(delimiter, at + 1)
    return None


def _tokenise_into(command: Command) -> None:
    if _TOKEN_SPECIAL.search(command.text) is None:
        # Plain words: one stage, no redirections.
        words = command.text.split()
        command.stages = [words] if words else [[]]
        command.redirects = []
        return
    words = _tokens(command.text)
    stages: list[list[str]] = [[]]
    redirects: list[tuple[str, str]] = []
    k = 0
    while k < len(words):
        word, is_op = words[k]
        if is_op and word in ("|", "|&"):
            stages.append([])
        elif is_op and _REDIRECT.match(word):
            # The target of `<<` is the heredoc's delimiter, kept like any other.
            target = words[k + 1][0] if k + 1 < len(words) else ""
            redirects.append((word, target))
            k += 1
        elif is_op:
            pass
        else:
            stages[-1].append(word)
        k += 1
    command.stages = [stage for stage in stages if stage] or [[]]
    command.redirects = redirects


_OP = re.compile(r"\d*(>>|>\||>&|&>>|&>|>|<<<|<<-|<<|<&|<>|<)|\|&|\|")
_FD = re.compile(r"\d+|-")
# A run of word characters with no meaning to the tokeniser (a digit may still start a
# redirection like "2>", so a word is never begun here with one).
# Characters that make a command more than blank-separated words: quotes, escapes,
# `$(`, redirections and pipes. Without them tokenising is `str.split()`.
_TOKEN_SPECIAL = re.compile(r"['\"\\$<>|&]")
_WORD_RUN = re.compile(r"[^\s'\"\\$<>|&]+")
_DOUBLE_QUOTED_RUN_WORD = re.compile(r'[^"\\]+')


def tokenise(text: str) -> list[tuple[str, bool]]:
    """Words of one command as (word, is_operator), quotes removed.

    Redirection operators keep their file descriptor ("2>", "&>"); a
    duplicated descriptor ("2>&1") is one operator with its target.
    """
    if _TOKEN_SPECIAL.search(text) is None:
        return [(word, False) for word in text.split()]
    return _tokens(text)


def _tokens(text: str) -> list[tuple[str, bool]]:
    """`tokenise` for text that has quotes, escapes or operators."""
    out: list[tuple[str, bool]] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(text)
    quote = ""
    while i < n:
        if quote == "'":
            end = text.find("'", i)
            if end == -1:
                word.append(text[i:])
                break
            word.append(text[i:end])
            quote = ""
            i = end + 1
            continue
        if quote == '"':
            run = _DOUBLE_QUOTED_RUN_WORD.match(text, i)
            if run is not None:
                word.append(run.group())
                i = run.end()
                continue
            ch = text[i]
            if ch == '"':
                quote = ""
            elif i + 1 < n and text[i + 1] in '"\\$`\n':
                word.append(text[i + 1])
                i += 1
            else:
                word.append(ch)
            i += 1
            continue
        ch = text[i]
        if in_word or not ch.isdigit():
            run = _WORD_RUN.match(text, i)
            if run is not None:
                word.append(run.group())
                in_word = True
                i = run.end()
                continue
        if ch in ("'", '"'):
            quote = ch
            in_word = True
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            word.append(text[i + 1])
            in_word = True
            i += 2
            continue
        if ch == "$" and text.startswith("$(", i):
            # A command substitution is one word, whatever it holds.
            end, depth = i + 2, 1
            while end < n and depth:
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            word.append(text[i:end])
            in_word = True
            i = end
            continue
        if ch.isspace():
            if in_word:
                out.append(("".join(word), False))
                word, in_word = [], False
            i += 1
            continue
        if ch in "<>|" or (ch == "&" and text.startswith("&>", i)) or (ch.isdigit() and not in_word):
            match = _OP.match(text, i)
            if match and (not ch.isdigit() or match.group(0) != ch):
                if in_word:
                    out.append(("".join(word), False))
                    word, in_word = [], False
                op = match.group(0)
                i = match.end()
                if op.endswith(">&") or op.endswith("<&"):
                    # 2>&1: the descriptor is the target, not a file.
                    fd = _FD.match(text, i)
                    if fd:
                        out.append((op, True))
                        out.append((fd.group(0), False))
                        i = fd.end()
                        continue
                out.append((op, True))
                continue
        word.append(ch)
        in_word = True
        i += 1
    if in_word:
        out.append(("".join(word), False))
    return out
