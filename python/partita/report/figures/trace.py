"""The arrival pattern of a trace folder (`partita report --trace DIR`), drawn by partita.trace.plot."""

from __future__ import annotations

import tempfile
from pathlib import Path

TITLE = "Arrival pattern (trace)"


class TraceUnavailable(RuntimeError):
    pass


def draw(trace_dir: Path) -> tuple[bytes, str | None]:
    """PNG bytes and the plot function's own summary sentence when it returns one."""
    try:
        from ...trace.plot import plot_arrivals
    except ImportError as e:
        raise TraceUnavailable(f"--trace needs the trace support (partita.trace.plot), which this installation "
                               f"lacks ({e})") from e
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "arrivals.png"
        said = plot_arrivals(trace_dir, out)
        return out.read_bytes(), said if isinstance(said, str) else None
