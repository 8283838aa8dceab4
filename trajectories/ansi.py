"""Terminal output (with ANSI escape codes) to safe HTML.

Agent observations are raw terminal captures: colour codes, cursor moves,
carriage returns. They are untrusted text, so the text is HTML-escaped
*first* and only then wrapped in spans whose classes (and, for 24-bit
colours, data attributes built from integers) come from our own tables.
Nothing from the input ever reaches the markup unescaped.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, replace

from django.utils.safestring import SafeString, mark_safe

# CSI sequences (ESC [ ... final byte), OSC sequences (ESC ] ... BEL or ST),
# and two-byte escapes (ESC + one character). The SGR ones (final "m") carry
# colours; every other sequence is dropped.
ESCAPE_RE = re.compile(
    r"\x1b\[(?P<csi>[0-9;?]*)(?P<final>[@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[@-Z\\-_]"
)
# A sequence cut off at the end of a truncated preview.
PARTIAL_ESCAPE_RE = re.compile(r"\x1b(?:\[[0-9;?]*|\][^\x07\x1b]*)?$")
# Control characters other than tab and newline render as garbage.
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

COLOURS = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]


@dataclass(frozen=True)
class Style:
    fg: str = ""  # a class suffix ("red", "bright-red") or ""
    bg: str = ""
    fg_rgb: tuple[int, int, int] | None = None
    bg_rgb: tuple[int, int, int] | None = None
    flags: frozenset[str] = field(default_factory=frozenset)

    def classes(self) -> list[str]:
        names = sorted(f"ansi-{flag}" for flag in self.flags)
        if self.fg:
            names.append(f"ansi-fg-{self.fg}")
        if self.bg:
            names.append(f"ansi-bg-{self.bg}")
        return names

    def data_attributes(self) -> str:
        """24-bit colours as data attributes: static/js/layout.js applies them (the CSP forbids style attributes)."""
        parts = []
        if self.fg_rgb:
            parts.append(' data-rgb-fg="%d,%d,%d"' % self.fg_rgb)
        if self.bg_rgb:
            parts.append(' data-rgb-bg="%d,%d,%d"' % self.bg_rgb)
        return "".join(parts)

    def is_plain(self) -> bool:
        return self == Style()


PLAIN = Style()
FLAG_CODES = {1: "bold", 2: "dim", 3: "italic", 4: "underline", 7: "inverse", 9: "strike"}
FLAG_RESETS = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",), 27: ("inverse",), 29: ("strike",)}


def _palette(n: int) -> str:
    """Class suffix for a 256-colour index; only the 16 named ones are kept."""
    if 0 <= n < 8:
        return COLOURS[n]
    if 8 <= n < 16:
        return f"bright-{COLOURS[n - 8]}"
    return ""


def _rgb(values: list[int]) -> tuple[int, int, int]:
    r, g, b = (max(0, min(255, v)) for v in values)
    return (r, g, b)


def apply_sgr(style: Style, params: str) -> Style:
    """The style after one SGR sequence ("1;31", "38;5;196", "")."""
    try:
        codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    except ValueError:
        return style
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            style = PLAIN
        elif code in FLAG_CODES:
            style = replace(style, flags=style.flags | {FLAG_CODES[code]})
        elif code in FLAG_RESETS:
            style = replace(style, flags=style.flags - set(FLAG_RESETS[code]))
        elif 30 <= code <= 37:
            style = replace(style, fg=COLOURS[code - 30], fg_rgb=None)
        elif 90 <= code <= 97:
            style = replace(style, fg=f"bright-{COLOURS[code - 90]}", fg_rgb=None)
        elif code == 39:
            style = replace(style, fg="", fg_rgb=None)
        elif 40 <= code <= 47:
            style = replace(style, bg=COLOURS[code - 40], bg_rgb=None)
        elif 100 <= code <= 107:
            style = replace(style, bg=f"bright-{COLOURS[code - 100]}", bg_rgb=None)
        elif code == 49:
            style = replace(style, bg="", bg_rgb=None)
        elif code in (38, 48) and i + 1 < len(codes):
            is_fg = code == 38
            if codes[i + 1] == 5 and i + 2 < len(codes):
                name = _palette(codes[i + 2])
                style = replace(style, fg=name, fg_rgb=None) if is_fg else replace(style, bg=name, bg_rgb=None)
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                rgb = _rgb(codes[i + 2 : i + 5])
                style = replace(style, fg="", fg_rgb=rgb) if is_fg else replace(style, bg="", bg_rgb=rgb)
                i += 4
            else:
                i += 1
        i += 1
    return style


def _span(text: str, style: Style) -> str:
    escaped = html.escape(text, quote=True)
    if style.is_plain() or not text:
        return escaped
    attrs = ""
    classes = style.classes()
    if classes:
        attrs += ' class="%s"' % " ".join(classes)
    attrs += style.data_attributes()
    return f"<span{attrs}>{escaped}</span>"


def _collapse_carriage_returns(text: str) -> str:
    """Keep what a terminal shows: text after the last \\r of each line wins.

    Progress bars redraw a line hundreds of times with \\r; showing every
    redraw hides the output that matters.
    """
    if "\r" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if "\r" in line:
            line = line.rsplit("\r", 1)[1]
        lines.append(line)
    return "\n".join(lines)


def strip_ansi(text: str) -> str:
    """Plain text with every escape sequence and stray control removed."""
    text = PARTIAL_ESCAPE_RE.sub("", ESCAPE_RE.sub("", text or ""))
    return CONTROL_RE.sub("", _collapse_carriage_returns(text))


def ansi_to_html(text: str) -> SafeString:
    """Escaped HTML for terminal text, colours as `ansi-*` classed spans."""
    text = PARTIAL_ESCAPE_RE.sub("", _collapse_carriage_returns(text or ""))
    out: list[str] = []
    style = PLAIN
    pos = 0
    for match in ESCAPE_RE.finditer(text):
        out.append(_span(CONTROL_RE.sub("", text[pos : match.start()]), style))
        if match.group("final") == "m":
            style = apply_sgr(style, match.group("csi") or "")
        pos = match.end()
    out.append(_span(CONTROL_RE.sub("", text[pos:]), style))
    return mark_safe("".join(out))
