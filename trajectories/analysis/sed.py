"""Applying simple `sed -i` scripts to a file's known content.

Agents edit files in place with `sed -i 's/old/new/' file`, `/pattern/d`
or `/pattern/a text`. To show such an edit as a real diff we replay it on
the content we last saw. Only what GNU sed does unambiguously is replayed
(s, d, a, i, c with a line-number, `$` or /regex/ address); for anything
else `apply_sed` returns None and the caller shows the command instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_POSIX_CLASSES = {
    "[:space:]": r"\s",
    "[:digit:]": r"0-9",
    "[:alpha:]": r"a-zA-Z",
    "[:alnum:]": r"a-zA-Z0-9",
    "[:upper:]": r"A-Z",
    "[:lower:]": r"a-z",
    "[:blank:]": r" \t",
    "[:punct:]": r"!-/:-@\[-`{-~",
    "[:xdigit:]": r"0-9A-Fa-f",
}


# An escaped delimiter ("s|a\\|b|c|") is a literal character wherever it is.
_ESCAPED_DELIMITER = "\x00"


class Unsupported(Exception):
    """The script uses sed features we do not replay."""


@dataclass
class SedCommand:
    address: tuple | None  # ("line", n) | ("last",) | ("regex", pattern) | ("range", a, b)
    name: str  # s | d | a | i | c
    pattern: re.Pattern | None = None
    replacement: list | None = None  # literal strings and group numbers
    count: int = 1  # 0 = every match (g)
    text: str = ""


def apply_sed(content: str, scripts: list[str], extended: bool = False) -> str | None:
    """`content` after running the sed `scripts` in place, or None if not replayable."""
    try:
        commands = [command for script in scripts for command in parse_script(script, extended)]
    except (Unsupported, re.error, IndexError):
        return None
    if not commands:
        return None
    ends_with_newline = content.endswith("\n")
    lines = content.split("\n")
    if ends_with_newline:
        lines.pop()
    out: list[str] = []
    in_range = [_INACTIVE] * len(commands)
    last = len(lines)
    for number, line in enumerate(lines, start=1):
        before: list[str] = []
        after: list[str] = []
        deleted = False
        for index, command in enumerate(commands):
            if not _matches(command.address, number, last, line, in_range, index):
                continue
            if command.name == "s":
                line = _substitute(command, line)
            elif command.name == "d":
                deleted = True
                break
            elif command.name == "a":
                after.append(command.text)
            elif command.name == "i":
                before.append(command.text)
            elif command.name == "c":
                # Over a range, GNU sed prints the text once, where the range ends.
                if not (command.address and command.address[0] == "range" and in_range[index] == _ACTIVE):
                    before.append(command.text)
                deleted = True
                break
        out.extend(before)
        if not deleted:
            out.append(line)
        out.extend(after)
    result = "\n".join(out)
    if out and ends_with_newline:
        result += "\n"
    return result


# A range's state per command: not started, active, or over for good (a
# range that starts at a line number starts once).
_INACTIVE, _ACTIVE, _CLOSED = 0, 1, 2


def _matches(address, number: int, last: int, line: str, in_range: list[int], index: int) -> bool:
    if address is None:
        return True
    kind = address[0]
    if kind == "line":
        return number == address[1]
    if kind == "last":
        return number == last
    if kind == "regex":
        return address[1].search(line) is not None
    if kind == "range":
        first, second = address[1], address[2]
        state = in_range[index]
        if state == _CLOSED:
            return False
        if state == _ACTIVE:
            if _matches(second, number, last, line, in_range, index) or (second[0] == "line" and number >= second[1]):
                in_range[index] = _CLOSED if first[0] == "line" else _INACTIVE
            return True
        # A line-number start that an earlier command kept this range from
        # seeing (`1d;1,$d`) still starts it, as in GNU sed.
        if first[0] == "line":
            # Passed unseen: only while lines up to a line-number end remain.
            starts = number == first[1] or (number > first[1] and not (second[0] == "line" and number > second[1]))
        else:
            starts = _matches(first, number, last, line, in_range, index)
        if starts:
            # A line-number end at or before the start, or a `$` end on the
            # last line, closes the range at once.
            if (second[0] == "line" and second[1] <= number) or (second[0] == "last" and number == last):
                in_range[index] = _CLOSED if first[0] == "line" else _INACTIVE
            else:
                in_range[index] = _ACTIVE
            return True
    return False


def _substitute(command: SedCommand, line: str) -> str:
    def expand(match: re.Match) -> str:
        return "".join(part if isinstance(part, str) else (match.group(part) or "") for part in command.replacement)

    out: list[str] = []
    done = 0
    seen = 0
    for match in _sed_matches(command.pattern, line):
        seen += 1
        if command.count in (0, seen):
            out.append(line[done : match.start()] + expand(match))
            done = match.end()
            if command.count:
                break
    return "".join(out) + line[done:]


def _sed_matches(pattern: re.Pattern, line: str):
    """Matches as sed counts them: an empty match right after a match is not one.

    `s/a*/y/g` on "a" gives "y" in sed, where Python's re.sub gives "yy".
    """
    previous_end = -1
    for match in pattern.finditer(line):
        if match.start() == match.end() == previous_end:
            continue
        previous_end = match.end()
        yield match


def parse_script(script: str, extended: bool = False) -> list[SedCommand]:
    commands: list[SedCommand] = []
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;":
            i += 1
        if i >= n:
            break
        address, i = _parse_address(script, i, extended)
        if i < n and script[i] == ",":
            second, i = _parse_address(script, i + 1, extended)
            if address is None or second is None:
                raise Unsupported("incomplete range")
            address = ("range", address, second)
        while i < n and script[i] in " \t":
            i += 1
        if i >= n:
            raise Unsupported("address without command")
        name = script[i]
        i += 1
        if name == "s":
            command, i = _parse_substitution(script, i, extended)
            command.address = address
        elif name == "d":
            command = SedCommand(address=address, name="d")
        elif name in "aic":
            text, i = _parse_text(script, i)
            command = SedCommand(address=address, name=name, text=text)
        else:
            raise Unsupported(f"sed command {name!r}")
        commands.append(command)
        while i < n and script[i] in " \t":
            i += 1
        if i < n and script[i] not in ";\n}":
            raise Unsupported("trailing text")
    return commands


def _parse_address(script: str, i: int, extended: bool):
    n = len(script)
    if i < n and script[i].isdigit():
        j = i
        while j < n and script[j].isdigit():
            j += 1
        return ("line", int(script[i:j])), j
    if i < n and script[i] == "$":
        return ("last",), i + 1
    if i < n and script[i] in "/\\":
        delimiter = "/"
        if script[i] == "\\":
            delimiter = script[i + 1]
            i += 1
        raw, i = _until(script, i + 1, delimiter)
        flags = 0
        if i < n and script[i] == "I":
            flags, i = re.IGNORECASE, i + 1
        return ("regex", re.compile(to_python_regex(raw, extended, delimiter), flags)), i
    return None, i


def _parse_substitution(script: str, i: int, extended: bool) -> tuple[SedCommand, int]:
    delimiter = script[i]
    if delimiter in "\\\n":
        raise Unsupported("bad delimiter")
    raw_pattern, i = _until(script, i + 1, delimiter)
    raw_replacement, i = _until(script, i, delimiter)
    count, flags = 1, 0
    n = len(script)
    while i < n and script[i] not in ";\n} \t":
        flag = script[i]
        if flag == "g":
            count = 0
        elif flag.isdigit():
            j = i
            while j < n and script[j].isdigit():
                j += 1
            count = int(script[i:j])
            i = j
            continue
        elif flag in "Ii":
            flags |= re.IGNORECASE
        else:
            raise Unsupported(f"s flag {flag!r}")
        i += 1
    pattern = re.compile(to_python_regex(raw_pattern, extended, delimiter), flags)
    return SedCommand(address=None, name="s", pattern=pattern, replacement=_replacement(raw_replacement, delimiter), count=count), i


def _parse_text(script: str, i: int) -> tuple[str, int]:
    """Text of a/i/c, GNU one-liner (`a text`) or classic (`a\\` newline text)."""
    n = len(script)
    while i < n and script[i] in " \t":
        i += 1
    if script.startswith("\\\n", i):
        i += 2
    elif i < n and script[i] == "\\":
        i += 1  # `a\  text` keeps the leading blanks after the backslash
    lines: list[str] = []
    current: list[str] = []
    while i < n:
        ch = script[i]
        if ch == "\\" and i + 1 < n:
            if script[i + 1] == "\n":
                lines.append("".join(current))
                current = []
                i += 2
                continue
            current.append(script[i + 1])
            i += 2
            continue
        if ch == "\\":  # a lone trailing backslash is dropped by GNU sed
            i += 1
            continue
        if ch == "\n":
            i += 1
            break
        current.append(ch)
        i += 1
    lines.append("".join(current))
    return "\n".join(lines), i


def _until(script: str, i: int, delimiter: str) -> tuple[str, int]:
    """Text up to an unescaped `delimiter` (escaped delimiters unescaped)."""
    out: list[str] = []
    n = len(script)
    while i < n:
        ch = script[i]
        if ch == "\\" and i + 1 < n:
            if script[i + 1] == delimiter:
                out.append(_ESCAPED_DELIMITER)
            else:
                out.append(script[i : i + 2])
            i += 2
            continue
        if ch == delimiter:
            return "".join(out), i + 1
        if ch == "[":
            end = _bracket_end(script, i)
            out.append(script[i:end])
            i = end
            continue
        out.append(ch)
        i += 1
    raise Unsupported("unterminated expression")


def _bracket_end(text: str, i: int) -> int:
    j = i + 1
    if j < len(text) and text[j] == "^":
        j += 1
    if j < len(text) and text[j] == "]":
        j += 1
    while j < len(text) and text[j] != "]":
        if text.startswith("[:", j):
            close = text.find(":]", j)
            j = close + 2 if close != -1 else j + 1
            continue
        j += 1
    return min(j + 1, len(text))


def to_python_regex(raw: str, extended: bool, delimiter: str = "/") -> str:
    """A POSIX basic (or extended) regular expression as a Python one."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == _ESCAPED_DELIMITER:
            out.append(re.escape(delimiter))
            i += 1
            continue
        if ch == "[":
            end = _bracket_end(raw, i)
            body = raw[i + 1 : end - 1]
            for name, replacement in _POSIX_CLASSES.items():
                body = body.replace(name, replacement)
            # Inside POSIX brackets a backslash is literal.
            if not any(cls in raw[i:end] for cls in _POSIX_CLASSES):
                body = body.replace("\\", "\\\\")
            out.append("[" + body + "]")
            i = end
            continue
        if ch == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if not extended and nxt in "(){}+?|":
                out.append(nxt)
            elif nxt in "<>":
                out.append(r"\b")
            elif nxt == "n":
                out.append(r"\n")
            elif nxt == "t":
                out.append(r"\t")
            elif nxt in "wWsSb" or nxt in ".*[]^$\\/" or nxt.isdigit():
                out.append("\\" + nxt)
            elif extended and nxt in "(){}+?|":
                out.append("\\" + nxt)
            else:
                out.append(re.escape(nxt))
            i += 2
            continue
        if not extended and ch in "(){}+?|":
            out.append("\\" + ch)
        elif ch == "*" and (not out or out[-1] in ("^", "(")):
            out.append(r"\*")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _replacement(raw: str, delimiter: str) -> list:
    parts: list = []
    literal: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if nxt.isdigit():
                parts.append("".join(literal))
                literal = []
                parts.append(int(nxt))
            elif nxt == "n":
                literal.append("\n")
            elif nxt == "t":
                literal.append("\t")
            elif nxt in "LUlEu":
                raise Unsupported("case conversion")
            else:
                literal.append(nxt)
            i += 2
            continue
        if ch == _ESCAPED_DELIMITER:
            literal.append(delimiter)
            i += 1
            continue
        if ch == "&":
            parts.append("".join(literal))
            literal = []
            parts.append(0)
            i += 1
            continue
        literal.append(ch)
        i += 1
    parts.append("".join(literal))
    return [part for part in parts if part != ""]
