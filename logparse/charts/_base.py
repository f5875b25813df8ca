"""Shared look of every logparse chart: sizes, palettes, axis helpers.

Chart functions take tidy polars DataFrames and only encode their columns (polars' `df.plot`
contract, style.md §6 and §8.7): every number a chart shows comes from the analysis layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

WIDTH = 520
HEIGHT = 260
SMALL_WIDTH = 300
SMALL_HEIGHT = 220

# Categorical palette (Tableau 10, reordered so the first two engines contrast well).
PALETTE = [
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#eeca3b",
    "#9d755d",
    "#ff9da6",
    "#bab0ac",
]
ENGINE_COLORS = {"vllm": "#4c78a8", "sglang": "#f58518"}
EVENT_COLORS = {
    "OOM": "#d62728",
    "OOM (recovered)": "#ff9896",
    "preemption": "#ff7f0e",
    "retraction": "#e377c2",
    "JIT compile": "#9467bd",
}
STABLE_FILL = "#54a24b"


def require(frame: pl.DataFrame, columns: Sequence[str], *, chart: str) -> None:
    """Raise `ValueError` naming the missing columns when `frame` lacks any of `columns`."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        msg = f"{chart}: the frame lacks column(s) {', '.join(missing)} (has {', '.join(frame.columns)})"
        raise ValueError(msg)


def chart_data(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """Only the columns a chart encodes (NaN as null), so the embedded data stays small and JSON-safe."""
    import polars as pl

    out = frame.select([c for c in dict.fromkeys(columns) if c in frame.columns])
    floats = [c for c, t in out.schema.items() if t in (pl.Float32, pl.Float64)]
    return out.with_columns(pl.col(floats).fill_nan(None)) if floats else out


def title(text: str, subtitle: str | None = None) -> dict[str, Any]:
    """A left-anchored chart title with an optional grey subtitle."""
    out: dict[str, Any] = {"text": text, "anchor": "start"}
    if subtitle:
        out["subtitle"] = subtitle
    return out


def style(chart: Any) -> Any:
    """Apply the common configuration (fonts, grid, legend) to a top-level chart.

    Chart functions return unconfigured charts so callers can still concatenate them; the report
    styles each one just before rendering.
    """
    return (
        chart.configure_axis(labelFontSize=11, titleFontSize=12, gridColor="#e8e8e8")
        .configure_legend(labelFontSize=11, titleFontSize=12, labelLimit=260)
        .configure_title(fontSize=14, subtitleFontSize=11, subtitleColor="#555555")
        .configure_view(stroke="#cccccc")
    )


def color_scale(domain: Sequence[str] | None = None) -> alt.Scale:
    """A categorical scale with the logparse palette (engine colours when the domain is engines)."""
    import altair as alt

    if domain is not None and domain and all(d in ENGINE_COLORS for d in domain):
        return alt.Scale(domain=list(domain), range=[ENGINE_COLORS[d] for d in domain])
    if domain is not None:
        return alt.Scale(domain=list(domain), range=PALETTE[: max(len(domain), 1)])
    return alt.Scale(range=PALETTE)


def unique(frame: pl.DataFrame, column: str) -> list[Any]:
    """Distinct non-null values of `column` in first-seen order (a legend's domain)."""
    if column not in frame.columns:
        return []
    return [v for v in frame.get_column(column).unique(maintain_order=True).to_list() if v is not None]


def reference_rule(
    *, y: float | None = None, x: float | None = None, color: str = "#888888", dash: Sequence[int] = (4, 3)
) -> alt.Chart:
    """A constant reference line (e.g. speedup 1.0, acceptance length 1.0), not data-driven."""
    import altair as alt

    enc = {"y": alt.datum(y)} if y is not None else {"x": alt.datum(x)}
    return alt.Chart(alt.Data(values=[{}])).mark_rule(color=color, strokeDash=list(dash)).encode(**enc)


# -- interaction (Vega-Lite parameters; the page runs them offline) ------------------------------

ZOOM = "zoom"  # the name of every chart's scale-bound interval selection (zoom / pan)
PICK = "pick"  # the name of every multi-run chart's legend-bound point selection
DIMMED = 0.12  # opacity of what the legend selection leaves out


def zoom(*, encodings: Sequence[str] = ("x",)) -> alt.Parameter:
    """Zoom with the wheel, pan by dragging: an interval selection bound to the scales of
    `encodings` (the time or context axis). Add it to one view of a chart only."""
    import altair as alt

    return alt.selection_interval(name=ZOOM, bind="scales", encodings=list(encodings))  # type: ignore[arg-type]


def legend_pick(field: str) -> alt.Parameter:
    """Click a legend entry to show that run (shift-click for several), click again or double-click
    the plot to show every run: a point selection on `field` bound to the legend."""
    import altair as alt

    return alt.selection_point(name=PICK, fields=[field], bind="legend")


def picked(param: alt.Parameter, *, on: float = 1.0, off: float = DIMMED) -> Any:
    """An opacity that dims the marks the legend selection `param` leaves out."""
    import altair as alt

    return alt.condition(param, alt.value(on), alt.value(off))
