"""A submission's states and the changes between them (Django-free): the one table, read by `services`.

received -> checked | failed_checks (the automatic checks, and the import held back)
checked -> verified (staff regraded a sample, and it agreed) | self_reported (staff take it as sent) | rejected
verified | self_reported -> published (on the board, with that mark) | rejected
failed_checks -> rejected
"""
from __future__ import annotations

RECEIVED = "received"
CHECKED = "checked"
FAILED_CHECKS = "failed_checks"
VERIFIED = "verified"
SELF_REPORTED = "self_reported"
PUBLISHED = "published"
REJECTED = "rejected"

LABELS = {
    RECEIVED: "received",
    CHECKED: "checks passed",
    FAILED_CHECKS: "failed checks",
    VERIFIED: "verified (regraded)",
    SELF_REPORTED: "self-reported",
    PUBLISHED: "published",
    REJECTED: "rejected",
}

TRANSITIONS: dict[str, frozenset[str]] = {
    RECEIVED: frozenset({CHECKED, FAILED_CHECKS}),
    CHECKED: frozenset({VERIFIED, SELF_REPORTED, REJECTED}),
    VERIFIED: frozenset({PUBLISHED, REJECTED}),
    SELF_REPORTED: frozenset({PUBLISHED, REJECTED}),
    FAILED_CHECKS: frozenset({REJECTED}),
    PUBLISHED: frozenset(),
    REJECTED: frozenset(),
}

# The board's marks of a published submission's entry.
MARK_VERIFIED = "verified"
MARK_SELF_REPORTED = "self_reported"
MARKS = {MARK_VERIFIED: "verified", MARK_SELF_REPORTED: "self-reported"}


class TransitionError(ValueError):
    """A change the table does not allow."""


def check_transition(current: str, new: str) -> None:
    if new not in TRANSITIONS.get(current, frozenset()):
        raise TransitionError(f"a submission {LABELS.get(current, current)} cannot become {LABELS.get(new, new)}")
