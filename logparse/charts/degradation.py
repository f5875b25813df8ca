"""Degradation curve: stable per-request decode throughput against context length, every run a
point, one line per series (engine, or engine and N)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from logparse.charts._base import (
    HEIGHT,
    chart_data,
    color_scale,
    legend_pick,
    picked,
    require,
    title,
    unique,
    zoom,
)

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

DEGRADATION_COLUMNS = ("series", "input_tokens", "per_request_tps", "ms_per_token", "n_label")
DEGRADATION_WIDTH = 440


def degradation_chart(
    frame: pl.DataFrame,
    *,
    heading: str = "Decode throughput against context length",
    subtitle: str | None = None,
    width: int = DEGRADATION_WIDTH,
    height: int = HEIGHT - 70,
) -> alt.LayerChart | alt.FacetChart:
    """Per-request decode tok/s of each stable window against context length, one line per series.

    Parameters
    ----------
    frame
        One row per stable window: ``series`` (engine or run: one line each), ``input_tokens``
        (context length), ``per_request_tps``, ``ms_per_token`` (in the tooltip), ``n_label``
        (the point label, e.g. ``N=10``); optional ``context_label`` and ``context_tick`` (axis
        label and tick position of the row's context length, e.g. ``64K`` at 64,000), ``source``
        (the run) and ``concurrency`` for the tooltip.
    heading, subtitle
        The chart title.
    width, height
        The plot's size in pixels.

    When two series cross between two context lengths the lines cross too: the crossover is
    the intersection, drawn, not computed. The context axis zooms and pans; the legend picks
    series.
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
        scale=alt.Scale(type="log", base=2, nice=False, padding=44),
        axis=axis,
    )
    y = alt.Y(
        "per_request_tps:Q",
        title="decode tok/s per request (stable window)",
        scale=alt.Scale(zero=True, nice=True),
    )
    pick = legend_pick("series")
    color = alt.Color("series:N", title="engine / run", scale=color_scale(series), sort=series)
    tooltip = [alt.Tooltip("series:N", title="series")]
    if "source" in data.columns:
        tooltip.append(alt.Tooltip("source:N", title="run"))
    tooltip.append(alt.Tooltip("input_tokens:Q", title="context (tokens per request)", format=","))
    if "concurrency" in data.columns:
        tooltip.append(alt.Tooltip("concurrency:Q", title="N (requests decoding)"))
    tooltip += [
        alt.Tooltip("per_request_tps:Q", title="decode tok/s per request", format=".1f"),
        alt.Tooltip("ms_per_token:Q", title="ms per output token", format=".1f"),
    ]
    base = alt.Chart(data).encode(x=x, y=y, color=color, opacity=picked(pick))
    # The legend selection lives on the first layer: Vega-Lite binds the legend of a layer chart
    # to a selection only there.
    line = base.mark_line(strokeWidth=2.5).encode(detail="series:N").add_params(pick)
    points = base.mark_point(filled=True, size=80).encode(tooltip=tooltip).add_params(zoom())
    # Labels beside the points, not above: the top point's label stays inside the plot.
    labels = base.mark_text(align="left", baseline="middle", dx=7, fontSize=10).encode(text="n_label:N")
    return alt.layer(line, points, labels).properties(
        width=width, height=height, title=title(heading, subtitle)
    )
