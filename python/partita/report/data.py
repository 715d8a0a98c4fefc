"""The runs of one or more results folders, grouped as the report and the headline use them:
one Group per suite run (its implementations side by side, repeated launches pooled), and
a list of the runs that gave no result (failed, unavailable, result file missing)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..pooling import pool_launches
from ..results import ResultError, is_params_file, load_result, load_run_dir


@dataclass
class Group:
    name: str                                   # the run's name in its suite
    program: str
    by_impl: dict[str, dict] = field(default_factory=dict)    # implementation label -> pooled result
    entries: dict[str, dict] = field(default_factory=dict)    # label -> manifest entry of its first launch
    # label -> (launch number, result) of every launch, unpooled: per-launch comparisons (launch_checks.py)
    launches: dict[str, list[tuple[int, dict]]] = field(default_factory=dict)
    suites: list[str] = field(default_factory=list)

    @property
    def first(self) -> dict:
        return next(iter(self.by_impl.values()))

    @property
    def benchmark(self) -> str:
        return self.first.get("benchmark", "")

    @property
    def config(self) -> dict:
        return self.first.get("config", {})

    @property
    def env(self) -> dict:
        return self.first.get("environment", {})

    def metric_names(self) -> set[str]:
        return {m for r in self.by_impl.values() for c in r.get("results", []) for m in c.get("metrics", {})}

    def noisy(self) -> bool:
        """A laggard or noise on the sender's threads (what availability and early-bird need)."""
        return str(self.config.get("noise", "none")) != "none"


@dataclass
class RunSet:
    folders: list[Path]
    groups: list[Group]
    problems: list[str]                         # runs that gave no result, one line each
    manifests: list[dict]
    params_files: list[Path] = field(default_factory=list)   # LogGP parameters measured by a partita-loggp run

    def of(self, *benchmarks: str) -> list[Group]:
        return [g for g in self.groups if g.benchmark in benchmarks]

    @property
    def lib_dir(self) -> str | None:
        for m in self.manifests:
            d = (m.get("build") or {}).get("lib_dir")
            if d:
                return d
        return None


def run_key(entry: dict) -> tuple:
    """Launches of the same run: same name, program and arguments (in one folder or several)."""
    return (str(entry.get("name")), str(entry.get("program", "")), tuple(entry.get("args") or []))


def folder_labels(folders: list[Path]) -> list[str]:
    """How the implementations of several folders are told apart: the folder names."""
    names = [f.resolve().name for f in folders]
    return [f"{n}/" if names.count(n) == 1 else f"{i + 1}:{n}/" for i, n in enumerate(names)]


def load_runs(folders: list[Path]) -> RunSet:
    """Every folder's results; raises ResultError naming the file when a manifest or result is unreadable.
    A run found in several folders is compared: its implementations are prefixed with the folder name."""
    manifests = [load_run_dir(f) for f in folders]
    seen_in: dict[tuple, set[int]] = {}
    for i, m in enumerate(manifests):
        for r in m.get("runs", []):
            seen_in.setdefault(run_key(r), set()).add(i)
    groups: dict[tuple, Group] = {}
    launches: dict[tuple, dict[str, list[dict]]] = {}
    problems: list[str] = []
    params_files: list[Path] = []
    for i, (folder, manifest, prefix) in enumerate(zip(folders, manifests, folder_labels(folders))):
        for r in manifest.get("runs", []):
            key = run_key(r)
            label = (prefix if len(seen_in[key]) > 1 else "") + str(r.get("impl", "native"))
            where = f"{r.get('name')} ({label}" + (
                f", launch {r.get('launch')}" if r.get("launches", 1) > 1 else "") + ")"
            if r.get("status") != "ok" or not r.get("result"):
                problems.append(f"{where}: {r.get('status', 'no result')}: "
                                f"{r.get('reason') or 'see ' + str(folder / str(r.get('log')))}")
                continue
            path = folder / r["result"]
            if not path.exists():
                problems.append(f"{where}: its result file {path} is missing")
                continue
            if is_params_file(path):
                params_files.append(path)
                continue
            res = load_result(path)
            g = groups.setdefault(key, Group(key[0], key[1] or str(res.get("program", ""))))
            if manifest.get("suite") and manifest["suite"] not in g.suites:
                g.suites.append(manifest["suite"])
            g.entries.setdefault(label, r)
            launches.setdefault(key, {}).setdefault(label, []).append(res)
            g.launches.setdefault(label, []).append((int(r.get("launch") or 1), res))
    for key, by_label in launches.items():
        groups[key].by_impl = {label: pool_launches(results) for label, results in by_label.items()}
    return RunSet(list(folders), [g for g in groups.values() if g.by_impl], problems, manifests, params_files)


def short_command(entry: dict, result: dict) -> str:
    """The command of a run as a reader would type it: program names without this machine's paths,
    without the output options the runner adds."""
    cmd = list(entry.get("command") or [])
    if not cmd:
        cmd = [result.get("program", "?"), *(entry.get("args") or [])]
    out = []
    skip = False
    for i, a in enumerate(cmd):
        if skip:
            skip = False
            continue
        if a in ("--format", "--output"):
            skip = True
            continue
        out.append(Path(a).name if "/" in a and (i == 0 or not a.startswith("-")) and Path(a).name.startswith(
            ("mpiexec", "mpirun", "srun", "partita-")) else a)
    return shlex.join(out)


def fmt_noise(cfg: dict) -> str:
    noise = str(cfg.get("noise", "none"))
    return "no noise" if noise == "none" else f"noise {noise} (thread {cfg.get('noise_thread', 0)})"


def what_was_run(g: Group) -> str:
    """One paragraph: command, MPI library, hosts, threads, compute mode, iterations, implementations."""
    env, cfg = g.env, g.config
    label0 = next(iter(g.by_impl))
    hosts = sorted(set(env.get("hosts") or []))
    parts = [f"run '{g.name}'" + (f" of suite {', '.join(g.suites)}" if g.suites else "") + ": "
             f"{short_command(g.entries.get(label0, {}), g.first)}"]
    parts.append(f"{' '.join(str(env.get('mpi_library', 'MPI library not recorded')).split())}")
    parts.append(f"{env.get('ranks', '?')} ranks on {env.get('nodes', '?')} node(s)"
                 + (f" ({', '.join(hosts)})" if hosts else ""))
    threads = cfg.get("threads")
    if threads is not None:
        parts.append(f"{threads} thread(s)")
    if cfg.get("compute_us"):
        mode = cfg.get("compute_mode", "spin")
        parts.append(f"compute {cfg['compute_us']:g} us, {mode} mode"
                     + (" (threads sleep instead of spinning, so more threads than cores behave)"
                        if mode == "sleep" else ""))
    else:
        parts.append("no compute")
    parts.append(fmt_noise(cfg))
    iters = cfg.get("iterations")
    n = g.first.get("launches", 1)
    if iters:
        parts.append(f"{iters} iterations" + (f" x {n} launches pooled" if n > 1 else ""))
    impls = []
    for label, res in g.by_impl.items():
        pol = res.get("environment", {}).get("partita_policy")
        impls.append(label + (f" (libpartita preloaded, policy {pol})" if pol else ""))
    parts.append("implementations: " + ", ".join(impls))
    return "; ".join(parts) + "."


__all__ = ["Group", "RunSet", "ResultError", "load_runs", "what_was_run", "short_command", "fmt_noise"]
