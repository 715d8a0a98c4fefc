"""Explaining a results folder: the headline verdict (console), the long tables, and the
self-contained HTML report with the seed papers' figures (docs/report.md)."""

from __future__ import annotations

from pathlib import Path

from .tables import print_run_summary


class ReportError(RuntimeError):
    """The report cannot be written (unreadable results, a trace that cannot be drawn)."""


def write_report(folders: list[Path], out: Path, trace: Path | None = None):
    """Write the HTML report of the folders to `out`; returns (runs, headline). Raises ReportError."""
    from ..results import ResultError, write_text_atomically
    from .data import load_runs
    from .figures import build_figures
    from .figures.common import Figure
    from .headline import headline
    from .html import page

    try:
        runs = load_runs(folders)
    except ResultError as e:
        raise ReportError(str(e)) from e
    figures = build_figures(runs)
    if trace is not None:
        from .figures import trace as trace_family
        try:
            png, said = trace_family.draw(trace)
        except trace_family.TraceUnavailable as e:
            raise ReportError(str(e)) from e
        figures.append(Figure(trace_family.TITLE, said,
                              f"trace folder {trace.name}", png, short="trace"))
    h = headline(runs, figures)
    try:
        write_text_atomically(out, page(runs, h, figures))  # a full disk leaves the last report whole
    except OSError as e:
        raise ReportError(f"cannot write {out}: {e}") from e
    return runs, h


def verdict(folders: list[Path]):
    """(runs, headline) without drawing: what the console prints."""
    from .data import load_runs
    from .figures import build_figures
    from .headline import headline

    runs = load_runs(folders)
    return runs, headline(runs, build_figures(runs, draw=False))


def explain_run(folder: Path, out=None) -> Path | None:
    """What `partita run` prints at the end: write folder/report.html, print the headline, the
    findings and the report's path; returns that path (None when it could not be written, after
    saying why and printing the long tables instead)."""
    import sys

    from ..results import load_run_dir
    from .headline import print_headline

    out = out or sys.stdout
    path = folder / "report.html"
    try:
        runs, h = write_report([folder], path)
    except ReportError as e:
        print(f"partita: the report was not written: {e}", file=sys.stderr)
        print_run_summary(folder, load_run_dir(folder), out)
        return None
    print_headline(h, [folder], path, out, runs.problems)
    return path


__all__ = ["ReportError", "explain_run", "print_run_summary", "verdict", "write_report"]
