"""trajectories.analysis.sed: replaying agents' `sed -i` scripts on a file's content.

Every row of the table is checked against our replay and, where GNU sed is
installed, against `sed --sandbox` itself, so the table cannot drift from
what sed really does. The property test at the end generates scripts and
files and holds the replay to GNU sed's output wherever it replays at all.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajectories.analysis.sed import apply_sed, parse_script, to_python_regex

GNU_SED = shutil.which("sed")
LINES = "a1\nb2\nc3\nd4\ne5\n"


def gnu_sed(content: str, scripts: list[str], extended: bool = False) -> str:
    """GNU sed's output for `content` (sandboxed: no w, r or e commands)."""
    args = [GNU_SED, "--sandbox"]
    if extended:
        args.append("-E")
    for script in scripts:
        args += ["-e", script]
    done = subprocess.run(args, input=content.encode(), capture_output=True, timeout=10)
    if done.returncode:
        raise ValueError(done.stderr.decode())
    return done.stdout.decode()


def has_gnu_sed() -> bool:
    if not GNU_SED:
        return False
    version = subprocess.run([GNU_SED, "--version"], capture_output=True, text=True).stdout
    return "GNU sed" in version


needs_gnu_sed = pytest.mark.skipif(not has_gnu_sed(), reason="GNU sed is not installed (apt-get install sed)")

# (content, scripts, extended, expected output)
CASES = [
    (LINES, ["2d"], False, "a1\nc3\nd4\ne5\n"),
    (LINES, ["$d"], False, "a1\nb2\nc3\nd4\n"),
    (LINES, ["2,3d"], False, "a1\nd4\ne5\n"),
    # A range whose end is a line at or before its start is one line long.
    (LINES, ["4,2d"], False, "a1\nb2\nc3\ne5\n"),
    (LINES, ["/b/,/d/d"], False, "a1\ne5\n"),
    (LINES, ["/b/,3s/./X/"], False, "a1\nX2\nX3\nd4\ne5\n"),
    (LINES, ["2,$s/^/> /"], False, "a1\n> b2\n> c3\n> d4\n> e5\n"),
    (LINES, ["/c/d"], False, "a1\nb2\nd4\ne5\n"),
    (LINES, ["/C/Id"], False, "a1\nb2\nd4\ne5\n"),
    (LINES, ["s/[[:digit:]]/N/"], False, "aN\nbN\ncN\ndN\neN\n"),
    ("x0 y9\n", ["s/[[:digit:]]/N/g"], False, "xN yN\n"),
    ("x0 y9\n", ["s/[^[:digit:]]/_/g"], False, "_0__9\n"),
    ("a b\tc\n", ["s/[[:space:]]/-/g"], False, "a-b-c\n"),
    ("Ab1\n", ["s/[[:upper:]]/U/;s/[[:lower:]]/l/"], False, "Ul1\n"),
    ("foo foo foo\n", ["s/foo/bar/2"], False, "foo bar foo\n"),
    ("foo foo foo\n", ["s/foo/bar/g"], False, "bar bar bar\n"),
    ("FOO\n", ["s/foo/bar/I"], False, "bar\n"),
    ("a\n", ["s/a*/y/g"], False, "y\n"),
    ("baaac\n", ["s/a*/x/g"], False, "xbxcx\n"),
    ("baaac\n", ["s/a*/x/2"], False, "bxc\n"),
    ("ab\n", [r"s/\(a\)\(b\)/\2\1/"], False, "ba\n"),
    ("ab\n", [r"s/(a)(b)/\2\1/"], True, "ba\n"),
    ("a+b\n", ["s/a+b/x/"], False, "x\n"),
    ("aab\n", ["s/a+b/x/"], True, "x\n"),
    ("x\n", ["s/x/[&]/"], False, "[x]\n"),
    ("a/b\n", [r"s|a/b|c\|d|"], False, "c|d\n"),
    ("a/b\n", [r"s/a\/b/c/"], False, "c\n"),
    ("key=1\n", ["s/=.*/=2/"], False, "key=2\n"),
    ("*x\n", ["s/*/y/"], False, "yx\n"),
    (LINES, ["$a end"], False, "a1\nb2\nc3\nd4\ne5\nend\n"),
    (LINES, ["2i before"], False, "a1\nbefore\nb2\nc3\nd4\ne5\n"),
    (LINES, ["2i\\\nbefore"], False, "a1\nbefore\nb2\nc3\nd4\ne5\n"),
    (LINES, ["3c changed"], False, "a1\nb2\nchanged\nd4\ne5\n"),
    (LINES, ["2,4c changed"], False, "a1\nchanged\ne5\n"),
    ("a\n", ["$,$c new"], False, "new\n"),
    # A range starting at a line an earlier command deleted still starts.
    (LINES, ["1d;1,2d"], False, "c3\nd4\ne5\n"),
    (LINES, ["2,3d;2,3s/./X/"], False, "a1\nd4\ne5\n"),
    (LINES, ["2,3d;2,4s/./X/"], False, "a1\nX4\ne5\n"),
    (LINES, ["1d;1,1s/./X/"], False, "b2\nc3\nd4\ne5\n"),
    (LINES, ["/[bd]/,/[bd]/s/^/>/"], False, "a1\n>b2\n>c3\n>d4\ne5\n"),
    ("a\n", ["$,/x/c new"], False, ""),
    (LINES, ["/e/a\\\n  kept blanks"], False, "a1\nb2\nc3\nd4\ne5\n  kept blanks\n"),
    (LINES, ["1d", "s/5/five/"], False, "b2\nc3\nd4\nefive\n"),
    ("no newline", ["s/no/a/"], False, "a newline"),
]


@pytest.mark.parametrize("content, scripts, extended, expected", CASES)
def test_replay(content, scripts, extended, expected):
    assert apply_sed(content, scripts, extended) == expected


@needs_gnu_sed
@pytest.mark.parametrize("content, scripts, extended, expected", CASES)
def test_the_table_is_what_gnu_sed_does(content, scripts, extended, expected):
    assert gnu_sed(content, scripts, extended) == expected


# Scripts that are not replayed: the caller shows the command instead of a diff.
UNSUPPORTED = [
    ["y/a/b/"],
    ["p"],
    ["2{d}"],
    ["s/a/\\U&/"],
    ["s/a/b/w out.txt"],
    ["s/unterminated/"],
    ["2"],
    [""],
]


@pytest.mark.parametrize("scripts", UNSUPPORTED)
def test_what_is_not_replayed_gives_none(scripts):
    assert apply_sed(LINES, scripts) is None


# (basic regular expression, the Python pattern it becomes)
REGEX_CASES = [
    (r"[[:digit:]]", "[0-9]"),
    (r"[[:alpha:]_]", "[a-zA-Z_]"),
    (r"\(x\)\{2\}", "(x){2}"),
    (r"(x)", r"\(x\)"),
    (r"a\+", "a+"),
    (r"a+", r"a\+"),
    (r"\<w\>", r"\bw\b"),
    (r"[\n]", r"[\\n]"),
]


@pytest.mark.parametrize("raw, expected", REGEX_CASES)
def test_basic_regex_translation(raw, expected):
    assert to_python_regex(raw, extended=False) == expected


def test_digit_class_covers_zero_and_nine():
    (command,) = parse_script("s/[[:digit:]]/N/g")
    assert command.pattern.sub("N", "0123456789") == "N" * 10


# --- GNU sed as the oracle --------------------------------------------------

_ATOMS = ["a", "b", "x", "1", ".", "[ab]", "[^a]", "[[:digit:]]", "[[:alpha:]]", "[[:space:]]", " "]


@st.composite
def regexes(draw) -> str:
    """A small basic regular expression over the files' alphabet."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        atom = draw(st.sampled_from(_ATOMS))
        if draw(st.booleans()) and len(parts) < 3:
            atom = r"\(" + atom + r"\)"
        parts.append(atom + draw(st.sampled_from(["", "", "*", r"\+", r"\?"])))
    anchored = draw(st.sampled_from(["", "^"])) + "".join(parts) + draw(st.sampled_from(["", "$"]))
    return anchored


def _groups(pattern: str) -> int:
    return pattern.count(r"\(")


@st.composite
def addresses(draw, n_lines: int) -> str:
    def one() -> str:
        kind = draw(st.sampled_from(["line", "last", "regex"]))
        if kind == "line":
            return str(draw(st.integers(1, n_lines + 1)))
        if kind == "last":
            return "$"
        return "/" + draw(regexes()) + "/"

    shape = draw(st.sampled_from(["none", "one", "range"]))
    if shape == "none":
        return ""
    if shape == "one":
        return one()
    return one() + "," + one()


@st.composite
def commands(draw, n_lines: int) -> str:
    address = draw(addresses(n_lines))
    name = draw(st.sampled_from(["s", "s", "s", "d", "a", "i", "c"]))
    if name == "s":
        pattern = draw(regexes())
        pieces = ["y", "&", "-", ""] + [f"\\{n}" for n in range(1, _groups(pattern) + 1)]
        replacement = "".join(draw(st.lists(st.sampled_from(pieces), max_size=3)))
        flags = draw(st.sampled_from(["", "g", "2", "I"]))
        return f"{address}s/{pattern}/{replacement}/{flags}"
    if name in "aic":
        text = draw(st.sampled_from(["new", "two words", "x1"]))
        return f"{address}{name} {text}"
    return f"{address}d"


@st.composite
def cases(draw) -> tuple[str, list[str]]:
    lines = draw(st.lists(st.text(alphabet="abx1 9", max_size=6), min_size=1, max_size=6))
    content = "\n".join(lines) + "\n"
    scripts = [";".join(draw(st.lists(commands(len(lines)), min_size=1, max_size=3)))]
    return content, scripts


@needs_gnu_sed
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_replay_agrees_with_gnu_sed(case):
    content, scripts = case
    ours = apply_sed(content, scripts)
    if ours is None:
        return  # not replayed: the explorer shows the command, which is never wrong
    assert ours == gnu_sed(content, scripts), f"sed {scripts!r} on {content!r}"
