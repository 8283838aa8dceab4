"""How the site writes a length of time: one rule for every page, the API's text and the commands.

"12.3s" under a minute (a step's seconds matter), "4m 05s" under an hour,
"1h 02m" beyond: the same units as the time axes' labels. Django-free.
"""
from __future__ import annotations

MISSING = "—"


def format_duration(seconds: float | None, missing: str = MISSING) -> str:
    """"1h 02m", "4m 05s", "12.3s"; `missing` for None."""
    if seconds is None:
        return missing
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"
