"""Figures described as a list of drawing calls (a `Sketch`), drawn with matplotlib later and
possibly in another process; the standard plots' layout helpers and their PNG writer.

`quicksim.plotting` prepares a plot's data with pandas and records what to draw on a Sketch:
the axes methods it calls with their (numpy) arguments, and the layout steps. `Sketch.draw`
replays them on a new matplotlib Figure. The split lets `quicksim run` prepare the plots in the
run's process and draw them in a worker that imports only numpy and matplotlib, forked before
pandas is loaded (issue 35); a plot function drawn in one process replays the same calls, so
both give the same pixels. This module imports neither pandas nor, until something is drawn,
matplotlib.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._io import atomic_write

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Sketch", "build_spare", "draw_sketches", "new_figure", "png_bytes", "png_writer"]

_FIG = -1  # the target of a figure call (`Sketch.fig`)
_STEP = -2  # the target of a layout step (`finish`, `mark_cut`, `layout`)

Call = tuple[int, str, tuple[Any, ...], dict[str, Any]]


class Sketch:
    """A figure of `nrows` panels sharing their time axis, `height` inches tall, as calls.

    `sketch.axes[i].step(x, y, where="post")` records `Axes.step` on panel i, `sketch.fig.
    suptitle(...)` a Figure method; `finish`, `mark_cut` and `layout` record the standard plots'
    own steps. Arguments must pickle without pandas (numpy arrays, numbers, strings), so that a
    worker without pandas can draw it. Nothing is returned from a recorded call.
    """

    def __init__(self, nrows: int = 1, height: float = 4.5) -> None:
        self.nrows = nrows
        self.height = height
        self.calls: list[Call] = []

    @property
    def axes(self) -> list[_Recorder]:
        """The panels, top to bottom."""
        return [_Recorder(self.calls, i) for i in range(self.nrows)]

    @property
    def fig(self) -> _Recorder:
        """The figure."""
        return _Recorder(self.calls, _FIG)

    def finish(
        self, panel: int, xlabel: str | None, title: str | None = None, *, legend: bool = True
    ) -> None:
        """Label, title and grid a panel; its legend (if it has entries) beside it (`_finish`)."""
        self.calls.append((_STEP, "finish", (panel, xlabel, title), {"legend": legend}))

    def mark_cut(self, panel: int, t: float) -> None:
        """Mark on a panel the time a series' recording stopped at `run.record.max_samples`."""
        self.calls.append((_STEP, "mark_cut", (panel, float(t)), {}))

    def layout(self, caption: str, *, suptitle_lines: int = 0, panel_titles: bool = False) -> None:
        """Fixed margins, the figure widened for the legends, `caption` in the corner (`_layout`)."""
        kwargs = {"suptitle_lines": suptitle_lines, "panel_titles": panel_titles}
        self.calls.append((_STEP, "layout", (caption,), kwargs))

    def draw(self) -> Figure:
        """A new matplotlib Figure with the recorded calls made on it, in order."""
        fig, axes = _figure(self.nrows, self.height)
        for target, name, args, kwargs in self.calls:
            if target == _STEP:
                _STEPS[name](fig, axes, *args, **kwargs)
            else:
                getattr(fig if target == _FIG else axes[target], name)(*args, **kwargs)
        return fig


def draw_sketches(jobs: Iterable[tuple[Path, Sketch]], *, dpi: int = 120) -> list[Path]:
    """Draw each Sketch into its PNG file at `dpi`; the files written, in order."""
    written = []
    for path, sketch in jobs:
        atomic_write(path, png_writer(sketch.draw(), dpi))
        written.append(path)
    return written


class _Recorder:
    """Stands for a panel (or the figure) of a Sketch: every method called on it is recorded."""

    def __init__(self, calls: list[Call], target: int) -> None:
        self._calls = calls
        self._target = target

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("_"):
            raise AttributeError(name)

        def record(*args: Any, **kwargs: Any) -> None:
            self._calls.append((self._target, name, args, kwargs))

        return record


def new_figure(**kwargs: Any) -> Figure:
    """A matplotlib Figure that a notebook displays as an image by itself.

    Figures are built without pyplot (no global state, no backend), and IPython shows such a
    Figure as its repr text unless `%matplotlib inline` registered its formatter; the
    `_repr_png_` method added here makes the returned figure display in any notebook.
    """
    global _NOTEBOOK_FIGURE
    if _NOTEBOOK_FIGURE is None:  # made once, on first use: matplotlib loads only when plotting
        from matplotlib.figure import Figure

        class NotebookFigure(Figure):
            """A Figure with a PNG repr for IPython."""

            def _repr_png_(self) -> bytes:
                import io

                buffer = io.BytesIO()
                self.savefig(buffer, format="png", dpi=100)
                return buffer.getvalue()

        _NOTEBOOK_FIGURE = NotebookFigure
    fig: Figure = _NOTEBOOK_FIGURE(**kwargs)
    return fig


_NOTEBOOK_FIGURE: Any = None


def _figure(nrows: int, height: float = 4.5) -> tuple[Figure, list[Axes]]:
    spare = _SPARE.get((nrows, height))
    return spare.pop() if spare else _build_figure(nrows, height)


def _build_figure(nrows: int, height: float) -> tuple[Figure, list[Axes]]:
    import matplotlib

    fig = new_figure(figsize=(_WIDTH_IN, height))
    # A fixed title height: by default matplotlib measures every tick label of the axes at each
    # draw to lift the title over ticks on top, which these axes never have (an eighth of the
    # standard plots' time).
    with matplotlib.rc_context({"axes.titley": 1.0}):
        axes = fig.subplots(nrows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, list(axes)


_SPARE: dict[tuple[int, float], list[tuple[Figure, list[Axes]]]] = {}
_SPARE_TICKS = 9  # a time axis 8 inches wide or a panel's y axis shows up to ~9 (with the 2 outside)


def build_spare(nrows: int, height: float = 4.5) -> None:
    """Build, ahead of drawing, an empty figure of `nrows` panels `height` inches tall, with its
    axes and their first ticks, for the next `Sketch.draw` of that shape to take.

    A plot worker does this while it waits for the figures: making the axes and the ticks is a
    fifth of drawing the standard plots, and otherwise happens while the run saves its tables
    on the same two cores (issue 35). A spare figure is the figure `_figure` would make; the
    ticks matplotlib creates as it draws are copies of the first tick, as these are, and every
    tick setting made afterwards applies to all existing ticks, so the pixels are the same
    (compared on the standard plots). Ticks beyond those a draw needs are not drawn.
    """
    fig, axes = _build_figure(nrows, height)
    for ax in axes:
        ax.xaxis.get_major_ticks(_SPARE_TICKS)
        ax.yaxis.get_major_ticks(_SPARE_TICKS)
    _SPARE.setdefault((nrows, height), []).append((fig, axes))


_LEGEND_INSIDE = 6  # up to this many legend entries in the small font, more in the smaller
_LEGEND_ROWS = 12


def _finish(
    fig: Figure, axes: list[Axes], panel: int, xlabel: str | None, title: str | None, *, legend: bool
) -> None:
    ax = axes[panel]
    if xlabel:
        ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.4)
    entries = len(ax.get_legend_handles_labels()[0]) if legend else 0
    if entries:
        # Beside the axes, never over the data (`_layout` widens the figure to make room), in
        # columns of at most _LEGEND_ROWS entries.
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="x-small" if entries > _LEGEND_INSIDE else "small",
            ncols=1 + (entries - 1) // _LEGEND_ROWS,
            borderaxespad=0.0,
        )


def _mark_cut(fig: Figure, axes: list[Axes], panel: int, t: float) -> None:
    ax = axes[panel]
    ax.axvline(t, color="0.3", linestyle="--", linewidth=0.8)
    ax.annotate(
        f"recording stopped at {t:.3g} s\n(run.record.max_samples)",
        (t, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(4, -4),
        textcoords="offset points",
        va="top",
        fontsize="x-small",
        color="0.3",
    )


# Fixed margins in inches. Matplotlib's constrained layout gets the same picture by drawing the
# figure again to measure it, which cost a third of the standard plots' time (issue 35); the
# legends, the only part whose size varies much, are measured alone.
_WIDTH_IN = 8.0
_LEFT_IN, _RIGHT_IN, _BOTTOM_IN, _TOP_IN, _GAP_IN = 0.8, 0.2, 0.75, 0.4, 0.12
_LINE_IN = 0.22  # one line of title text


def _layout(fig: Figure, axes: list[Axes], caption: str, *, suptitle_lines: int, panel_titles: bool) -> None:
    """Place the axes by fixed margins, widen the figure for the legends beside them, and write
    `caption` (the scenario and seed) in the bottom right corner."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    legends = [lg for ax in axes if (lg := ax.get_legend()) is not None]
    legend_in = max((lg.get_window_extent(renderer).width / fig.dpi for lg in legends), default=0.0)
    width_in = _WIDTH_IN + (legend_in + 0.15 if legend_in else 0.0)
    height_in = float(fig.get_figheight())
    fig.set_size_inches(width_in, height_in)
    titled = any(ax.get_title() for ax in axes)
    top_in = _TOP_IN + _LINE_IN * suptitle_lines + (0.0 if titled or suptitle_lines else -0.2)
    panel_titles = panel_titles or sum(bool(ax.get_title()) for ax in axes) > 1
    gap_in = _GAP_IN + (_LINE_IN + 0.05 if panel_titles else 0.0)
    fig.subplots_adjust(
        left=_LEFT_IN / width_in,
        right=(_WIDTH_IN - _RIGHT_IN) / width_in,
        bottom=_BOTTOM_IN / height_in,
        top=1 - top_in / height_in,
        hspace=gap_in / max(0.5, (height_in - top_in - _BOTTOM_IN) / max(1, len(axes))),
    )
    if suptitle_lines and fig.get_suptitle():
        fig.suptitle(fig.get_suptitle(), y=1 - 0.08 / height_in, va="top", fontsize="medium")
    if caption:
        at = (1 - 0.08 / width_in, 0.06 / height_in)
        fig.text(*at, caption, ha="right", va="bottom", fontsize=7, color="0.35")


_STEPS: dict[str, Callable[..., None]] = {"finish": _finish, "mark_cut": _mark_cut, "layout": _layout}


# --- PNG ----------------------------------------------------------------------------------------


def png_writer(fig: Figure, dpi: int) -> Callable[[Path], object]:
    """A writer of `fig` as a PNG file at `dpi` (for `_io.atomic_write`)."""
    return lambda path: Path(path).write_bytes(png_bytes(fig, dpi))


def png_bytes(fig: Figure, dpi: int) -> bytes:
    """`fig` as PNG at `dpi`: the pixels `savefig(format="png")` gives, encoded faster.

    Matplotlib hands its pixels to Pillow, which picks a PNG filter per row by trying all five:
    ~70 % of the encoding's time (0.1 s for the showcase's seven figures, at zlib's level 1).
    Here every row is filtered by "Up" (the difference to the row above: plots are mostly
    vertical runs of equal pixels), which gives files of the same size in 40 % of the time. The
    chunks are those matplotlib writes (size, software, resolution); a decoder returns the same
    pixels.
    """
    import io

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    raw = io.BytesIO()
    fig.savefig(raw, format="rgba", dpi=dpi)  # savefig's colours and dpi; the canvas' renderer
    width, height = int(canvas.renderer.width), int(canvas.renderer.height)
    pixels = np.frombuffer(raw.getbuffer(), dtype=np.uint8)
    if pixels.size != width * height * 4:  # not the renderer savefig drew with: let Pillow encode
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
        return out.getvalue()
    rows = pixels.reshape(height, width * 4)
    filtered = np.empty((height, width * 4 + 1), dtype=np.uint8)
    filtered[:, 0] = 2  # PNG filter type 2, "Up"
    filtered[0, 1:] = rows[0]  # the row above the first is zeros
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])  # modulo 256, as PNG defines it
    software = f"Matplotlib version{matplotlib.__version__}, https://matplotlib.org/"
    per_metre = int(dpi / 0.0254 + 0.5)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),  # 8-bit RGBA
            _chunk(b"tEXt", b"Software\0" + software.encode("latin-1")),
            _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
            # zlib's fastest level: 0.6 instead of 0.85 s of CPU for the showcase's figures when
            # it was measured with Pillow; the files are ~20 % larger than at the default level.
            _chunk(b"IDAT", zlib.compress(filtered.data, 1)),
            _chunk(b"IEND", b""),
        ]
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
