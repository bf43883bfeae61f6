"""The self-contained HTML page of `quicksim report`: figures as base64 PNGs, inline CSS, no
script and no address outside the file, so it opens offline and can be mailed as one file."""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Section", "page", "png_data", "table"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0 1em; }
p.note { color: #555; font-size: 0.9em; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""


@dataclass
class Section:
    """One part of the page: a heading, notes, figures (PNG bytes with their alt text) and
    tables (already rendered HTML)."""

    title: str
    notes: list[str] = field(default_factory=list)
    figures: list[tuple[str, bytes]] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    level: int = 2

    def empty(self) -> bool:
        """Nothing but a heading and notes."""
        return not self.figures and not self.tables


def png_data(fig: Figure, dpi: int = 96) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 6})
    return buffer.getvalue()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An HTML table; numbers are right-aligned, NaN and None print as "-"."""

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return '<td class="num">-</td>'
        if isinstance(v, bool) or not isinstance(v, int | float):
            return f"<td>{html.escape(str(v))}</td>"
        text = f"{v:,}" if isinstance(v, int) else f"{v:.4g}"
        return f'<td class="num">{text}</td>'

    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(cell(v) for v in r) + "</tr>" for r in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def page(title: str, intro: Sequence[str], sections: Sequence[Section]) -> str:
    """The whole page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Nothing may be fetched: no scripts, no styles, no fonts or images from anywhere else.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">",
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        *(f"<p>{line}</p>" for line in intro),
    ]
    for s in sections:
        h = f"h{s.level}"
        parts.append(f"<{h}>{html.escape(s.title)}</{h}>")
        parts += [f'<p class="note">{html.escape(n)}</p>' for n in s.notes]
        for alt, png in s.figures:
            data = base64.b64encode(png).decode("ascii")
            parts.append(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">')
        parts += list(s.tables)
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)
