"""Option values read alike by every command: comma-separated lists, paths."""

from __future__ import annotations

import argparse
from pathlib import Path


def list_entries(text: str, what: str) -> list[str]:
    """The comma-separated entries of text; an empty one (`4,,8`, `,4`, `4,`) is refused, as the C tools
    refuse it, rather than skipped: it is more likely a lost value than an intended one."""
    entries = text.split(",")
    if any(not e.strip() for e in entries):
        raise ValueError(f"{what} has an empty entry (got '{text}')")
    return entries


def nonempty(text: str) -> str:
    """argparse type of a name or path: an empty one is refused, as the C programs refuse it (an empty
    path is the current folder to pathlib: `--out ''` wrote the results there)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty value is not allowed")
    return text


def path_arg(text: str) -> Path:
    """argparse type of a file or folder option (nonempty)."""
    return Path(nonempty(text))
