"""Writing a matplotlib figure to the file a user named."""
from __future__ import annotations

from pathlib import Path


def format_problem(path) -> str | None:
    """Why matplotlib cannot write a figure named path (its suffix), or None: asked before
    anything else is written, so a command with several outputs writes all or none."""
    from matplotlib.backend_bases import FigureCanvasBase

    kind = Path(path).suffix[1:].lower()
    kinds = FigureCanvasBase.get_supported_filetypes()
    if kind and kind not in kinds:
        return f"{path}: matplotlib cannot write a .{kind} figure (it writes {', '.join(sorted(kinds))})"
    return None


def folder_problem(path) -> str | None:
    """Why path names a folder, not a figure's file, or None (matplotlib would write DIR.png beside it)."""
    path = Path(path)
    return f"{path} is a folder; name the figure's file (e.g. {path / 'figure.png'})" if path.is_dir() else None


def save_figure(fig, path, dpi: int = 120):
    """Write fig to path (a file name, or a binary file object) and close it. A name without a
    suffix gets .png, which is what matplotlib writes there, so the name returned is the file's.
    Raises ValueError for a folder or a suffix matplotlib cannot write, OSError when it cannot write."""
    import matplotlib.pyplot as plt

    if isinstance(path, (str, Path)):
        path = Path(path)
        if problem := folder_problem(path):
            plt.close(fig)
            raise ValueError(problem)
        if not path.suffix:
            path = path.with_suffix(".png")
    try:
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
    return path
