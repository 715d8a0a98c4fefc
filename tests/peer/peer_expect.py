"""The checked-in list of peer cases expected to fail, each with its reason.

Format of expectations.txt, one entry a line, fields separated by `|`:
    suite | case pattern | MPI pattern | policy pattern | reason
Patterns are shell-style (fnmatch); `#` starts a comment line. An entry with an empty
reason is rejected: every expected failure must say why. A reason that starts with
"Intermittent" marks a case that fails only sometimes, so its passing is not news.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Expectation:
    suite: str
    case: str
    mpi: str
    policy: str
    reason: str

    def covers(self, suite: str, case: str, mpi: str, policy: str) -> bool:
        return (fnmatch.fnmatchcase(suite, self.suite) and fnmatch.fnmatchcase(case, self.case)
                and fnmatch.fnmatchcase(mpi, self.mpi) and fnmatch.fnmatchcase(policy, self.policy))


def load(path: Path) -> list[Expectation]:
    entries = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 5 or not all(fields):
            raise ValueError(f"{path.name}:{number}: want 'suite | case | mpi | policy | reason', got: {raw}")
        entries.append(Expectation(*fields))
    return entries


def reason_for(entries: list[Expectation], suite: str, case: str, mpi: str, policy: str) -> str | None:
    for entry in entries:
        if entry.covers(suite, case, mpi, policy):
            return entry.reason
    return None


def is_intermittent(reason: str | None) -> bool:
    return bool(reason) and reason.lower().startswith("intermittent")
