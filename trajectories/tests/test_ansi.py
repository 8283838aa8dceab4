import pytest

from trajectories.ansi import apply_sgr, ansi_to_html, strip_ansi, Style

ESC = "\x1b"


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("plain text", "plain text"),
        ("", ""),
        (f"{ESC}[31mred{ESC}[0m done", '<span class="ansi-fg-red">red</span> done'),
        (f"{ESC}[1;32mok{ESC}[m", '<span class="ansi-bold ansi-fg-green">ok</span>'),
        (f"{ESC}[91mhi{ESC}[39m", '<span class="ansi-fg-bright-red">hi</span>'),
        (f"{ESC}[44mbg{ESC}[49m", '<span class="ansi-bg-blue">bg</span>'),
        (f"{ESC}[38;5;9mx", '<span class="ansi-fg-bright-red">x</span>'),
        # 24-bit colours: numbers in data attributes (static/js/layout.js applies them; the CSP forbids style attributes).
        (f"{ESC}[38;2;10;300;0mx", '<span data-rgb-fg="10,255,0">x</span>'),
        (f"{ESC}[48;2;1;2;3;1mx", '<span class="ansi-bold" data-rgb-bg="1,2,3">x</span>'),
        # Cursor moves and OSC titles are dropped, not shown as garbage.
        (f"a{ESC}[2Kb{ESC}[1Ac", "abc"),
        (f"{ESC}]0;title{ESC}\\after", "after"),
        (f"{ESC}]0;title\x07after", "after"),
        # A preview cut in the middle of a sequence.
        (f"tail{ESC}[3", "tail"),
        (f"tail{ESC}", "tail"),
        # Progress bars: what the terminal finally shows.
        ("10%\r50%\r100%\nnext", "100%\nnext"),
        ("windows\r\nline", "windows\nline"),
        ("bell\x07 and nul\x00", "bell and nul"),
    ],
)
def test_ansi_to_html(raw, expected):
    assert ansi_to_html(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "<script>alert(1)</script>",
        f"{ESC}[31m<img src=x onerror=alert(1)>{ESC}[0m",
        '<a href="javascript:alert(1)">x</a>',
        f"{ESC}[31;\"><script>alert(1)</script>m",
    ],
)
def test_markup_in_output_is_escaped(raw):
    rendered = ansi_to_html(raw)
    assert "<script" not in rendered
    assert "<img" not in rendered
    assert "<a " not in rendered
    assert "&lt;" in rendered


def test_escaped_text_keeps_the_visible_characters():
    assert ansi_to_html('a < b & "c"') == "a &lt; b &amp; &quot;c&quot;"


@pytest.mark.parametrize(
    "params, expected",
    [
        ("", Style()),
        ("0", Style()),
        ("1", Style(flags=frozenset({"bold"}))),
        ("1;22", Style()),
        ("31;42", Style(fg="red", bg="green")),
        ("38;5;200", Style()),  # outside the 16 named colours: ignored
        ("bogus", Style()),
    ],
)
def test_apply_sgr(params, expected):
    assert apply_sgr(Style(), params) == expected


def test_strip_ansi():
    assert strip_ansi(f"{ESC}[1mbold{ESC}[0m\r\nx") == "bold\nx"
