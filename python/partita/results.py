"""Reading benchmark results (partita.result/1 JSON) and run folders (partita.run/1)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

RESULT_SCHEMA = "partita.result/1"
RUN_SCHEMA = "partita.run/1"

# Metrics a summary shows first, per benchmark; others fall back to the
# result's own "headline_metrics" or its first three metrics.
HEADLINES = {
    "p2p": ["overhead", "perceived_bw", "availability", "early_bird", "early_arrival"],
}


class ResultError(ValueError):
    pass


def load_result(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ResultError(f"{path}: not a readable result ({e})") from e
    if data.get("schema") != RESULT_SCHEMA:
        raise ResultError(f"{path}: schema {data.get('schema')!r} is not {RESULT_SCHEMA}")
    return data


# partita-p2p --metric NAME -> the metric it reports
P2P_METRIC_CHOICE = {"overhead": "overhead", "perceived-bw": "perceived_bw", "availability": "availability",
                     "early-bird": "early_bird", "early-arrival": "early_arrival", "pready-cost": "pready_ns"}


def headline_metrics(result: dict) -> list[str]:
    names = HEADLINES.get(result.get("benchmark", ""), result.get("headline_metrics"))
    chosen = result.get("config", {}).get("metric")
    if result.get("benchmark") == "p2p" and chosen in P2P_METRIC_CHOICE:
        names = [P2P_METRIC_CHOICE[chosen]]
    elif result.get("benchmark") == "p2p" and chosen == "all":
        names = names + ["pready_ns"]
    measured = [c for c in result.get("results", []) if "metrics" in c]
    if not measured:
        return []
    available = list(measured[0]["metrics"])
    if names:
        return [n for n in names if n in available]
    return available[:3]


@dataclass(frozen=True)
class CaseRow:
    key: tuple
    labels: dict
    skipped: str | None


def case_key(case: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in case.items()))


def cases(result: dict) -> list[dict]:
    return list(result.get("results", []))


def load_run_dir(path: Path) -> dict:
    """The manifest of a results folder written by `partita run`."""
    f = Path(path) / "manifest.json"
    try:
        data = json.loads(f.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ResultError(f"{f}: not a readable run manifest ({e})") from e
    if data.get("schema") != RUN_SCHEMA:
        raise ResultError(f"{f}: schema {data.get('schema')!r} is not {RUN_SCHEMA}")
    return data
