"""The arrival pattern of a trace folder (`partita report --trace DIR`): the figure is
partita.trace.plot's, the finding the trace analysis of each send request."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ...trace.analysis import analyse
from ...trace.plot import plot_arrivals
from ...trace.reader import TraceError, load_trace
from ...trace.show import brief_line

TITLE = "Arrival pattern (trace)"


class TraceUnavailable(RuntimeError):
    pass


def draw(trace_dir: Path) -> tuple[bytes, str]:
    """PNG bytes and a finding computed from the trace (one clause per send request)."""
    try:
        trace = load_trace(trace_dir)
    except TraceError as e:
        raise TraceUnavailable(str(e)) from e
    analyses = analyse(trace)
    if not analyses:
        raise TraceUnavailable(f"{trace_dir}: the trace holds no partitioned send request to draw")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "arrivals.png"
        try:
            plot_arrivals(trace, out)
        except ValueError as e:  # e.g. no send request with a recorded round
            raise TraceUnavailable(str(e)) from e
        return out.read_bytes(), "; ".join(brief_line(a) for a in analyses) + "."
