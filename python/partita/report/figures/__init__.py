"""The registry of figure families: one module each, with TITLE, subjects(runs) (what in the
results it draws: usually suite runs), finding(subject), draw(subject) -> PNG bytes and
optionally caption(subject) and table(subject). Adding a family means adding a module here."""

from __future__ import annotations

from . import availability, bandwidth, earlybird, mech, model, overhead, patterns
from .common import Figure

FAMILIES = [overhead, bandwidth, availability, earlybird, patterns, mech, model]


def caption_of(family, subject) -> str:
    if hasattr(family, "caption"):
        return family.caption(subject)
    from ..data import what_was_run
    return what_was_run(subject)


def title_of(family, subject) -> str:
    name = getattr(subject, "name", None)
    return family.TITLE + (f": run '{name}'" if name else "")


def build_figures(runs, draw: bool = True) -> list[Figure]:
    """Every figure the results hold, in family order; with draw=False only the findings (console)."""
    out = []
    for family in FAMILIES:
        for subject in family.subjects(runs):
            fig = Figure(title_of(family, subject), family.finding(subject), caption_of(family, subject),
                         short=family.SHORT, run=getattr(subject, "name", ""))
            if hasattr(family, "table"):
                fig.table = family.table(subject)
            if draw:
                fig.png = family.draw(subject)
            out.append(fig)
    return out
