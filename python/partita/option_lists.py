"""Comma-separated option values, read alike by every command."""

from __future__ import annotations


def list_entries(text: str, what: str) -> list[str]:
    """The comma-separated entries of text; an empty one (`4,,8`, `,4`, `4,`) is refused, as the C tools
    refuse it, rather than skipped: it is more likely a lost value than an intended one."""
    entries = text.split(",")
    if any(not e.strip() for e in entries):
        raise ValueError(f"{what} has an empty entry (got '{text}')")
    return entries
