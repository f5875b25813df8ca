"""Degradation curve: stable per-request decode throughput against context length."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from logparse.charts._base import HEIGHT, SMALL_WIDTH, chart_data, color_scale, require, title, unique

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

DEGRADATION_COLUMNS = ("series", "input_tokens", "per_request_tps", "ms_per_token", "n_label")


def degradation_chart(
    frame: pl.DataFrame,
    *,
    heading: str = "Decode throughput against context length",
    subtitle: str | None = None,
) -> alt.HConcatChart:
    """Two panels against context length: per-request tok/s and ms/token, one line per series.

    Parameters
    ----------
    frame
        One row per stable window: ``series`` (engine or run: one line each), ``input_tokens``
        (context length), ``per_request_tps``, ``ms_per_token``, ``n_label`` (the point label,
        e.g. ``N=10``); optional ``context_label`` and ``context_tick`` (axis label and tick
        position of the row's context length, e.g. ``64K`` at 64,000), ``source`` and
        ``concurrency`` for the tooltip.
    heading, subtitle
        The chart title.

    When two series cross between two context lengths the lines cross too: the crossover is
    the intersection, drawn, not computed.
    """
    import altair as alt

    require(frame, DEGRADATION_COLUMNS, chart="degradation_chart")
    columns = [*DEGRADATION_COLUMNS, "source", "concurrency", "context_label", "context_tick"]
    data = chart_data(frame, columns).sort("series", "input_tokens")
    tick_column = "context_tick" if "context_tick" in data.columns else "input_tokens"
    ticks = sorted({int(v) for v in data.get_column(tick_column).drop_nulls().to_list()})
    series = unique(data, "series")
    axis = alt.Axis(values=ticks, format=".3~s", labelFlush=False)
    if "context_label" in data.columns and "context_tick" in data.columns:
        # One tick per context label (64K, 200K), labelled with it.
        pairs = data.select("context_tick", "context_label").unique().drop_nulls().rows()
        lookup = json.dumps({str(int(t)): str(label) for t, label in sorted(pairs)})
        axis = alt.Axis(
            values=ticks,
            labelExpr=f"{lookup}[''+datum.value] || format(datum.value, '.3~s')",
            labelFlush=False,
        )
    x = alt.X(
        "input_tokens:Q",
        title="context length (input tokens per request)",
        scale=alt.Scale(type="log", base=2, nice=False, padding=24),
        axis=axis,
    )
    color = alt.Color("series:N", title="engine / run", scale=color_scale(series), sort=series)
    tooltip = [
        alt.Tooltip(c, title=c.replace("_", " "))
        for c in ("series", "source", "input_tokens", "concurrency")
        if c in data.columns
    ]
    base = alt.Chart(data).encode(x=x, color=color)

    def panel(field: str, axis_title: str, fmt: str) -> alt.LayerChart | alt.FacetChart:
        y = alt.Y(f"{field}:Q", title=None, scale=alt.Scale(zero=True, nice=True))
        tips = [*tooltip, alt.Tooltip(f"{field}:Q", title=axis_title, format=fmt)]
        line = base.mark_line(strokeWidth=2.5).encode(y=y, detail="series:N")
        points = base.mark_point(filled=True, size=70).encode(y=y, tooltip=tips)
        labels = base.mark_text(dy=-11, fontSize=10).encode(y=y, text="n_label:N")
        return alt.layer(line, points, labels).properties(
            width=SMALL_WIDTH + 40, height=HEIGHT, title=axis_title
        )

    left = panel("per_request_tps", "decode tok/s per request (stable window)", ".1f")
    right = panel("ms_per_token", "ms per output token", ".1f")
    return alt.hconcat(left, right, spacing=28).properties(title=title(heading, subtitle))
