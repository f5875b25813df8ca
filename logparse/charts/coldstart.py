"""Cold-start Gantt: load, compile, KV allocation, graph capture and ready, per rank."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import WIDTH, chart_data, require, title, unique, zoom

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

SPAN_COLUMNS = ("rank", "stage", "start_s", "end_s")
INSTANT_COLUMNS = ("rank", "stage", "at_s")

STAGE_ORDER = [
    "weight loading",
    "compile / JIT",
    "KV allocation",
    "CUDA graph capture",
    "engine init",
    "ready",
]
STAGE_COLORS = ["#4c78a8", "#b279a2", "#72b7b2", "#f58518", "#9d755d", "#54a24b"]


def coldstart_chart(
    spans: pl.DataFrame,
    instants: pl.DataFrame | None = None,
    *,
    heading: str = "Cold start",
    subtitle: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Horizontal bars per rank from each stage's start to its end (seconds since the first line).

    Parameters
    ----------
    spans
        ``rank``, ``stage`` (one of `STAGE_ORDER` ideally), ``start_s``, ``end_s``; optional
        ``seconds`` and ``detail`` for the tooltip.
    instants
        Zero-length milestones (KV pool allocated, server ready): ``rank``, ``stage``, ``at_s``.
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(spans, SPAN_COLUMNS, chart="coldstart_chart")
    data = chart_data(spans, [*SPAN_COLUMNS, "seconds", "detail"])
    marks = (
        chart_data(instants, [*INSTANT_COLUMNS, "detail"])
        if instants is not None and not instants.is_empty()
        else None
    )
    if marks is not None:
        require(marks, INSTANT_COLUMNS, chart="coldstart_chart (instants)")
    ranks = unique(data, "rank") + [
        r for r in (unique(marks, "rank") if marks is not None else []) if r not in unique(data, "rank")
    ]
    stages = [
        s
        for s in STAGE_ORDER
        if s in set(unique(data, "stage")) | set(unique(marks, "stage") if marks is not None else [])
    ]
    stages += [s for s in unique(data, "stage") if s not in stages]
    colors = [STAGE_COLORS[STAGE_ORDER.index(s)] if s in STAGE_ORDER else "#bab0ac" for s in stages]
    span_stages = [s for s in stages if s in set(unique(data, "stage"))]
    color = alt.Color("stage:N", title="stage", scale=alt.Scale(domain=stages, range=colors), sort=stages)
    # Grid lines on the band edges: each rank's sub-rows read as one group under its label.
    y = alt.Y("rank:N", title="rank", sort=ranks, axis=alt.Axis(grid=True, tickBand="extent"))
    tooltip = [
        "rank:N",
        "stage:N",
        alt.Tooltip("start_s:Q", title="start (s since the first line)", format=".1f"),
        alt.Tooltip("end_s:Q", title="end (s since the first line)", format=".1f"),
    ]
    if "seconds" in data.columns:
        tooltip.append(alt.Tooltip("seconds:Q", title="duration (s)", format=".1f"))
    if "detail" in data.columns:
        tooltip.append("detail:N")
    bars = (
        alt.Chart(data)
        .mark_bar(height={"band": 0.85}, cornerRadius=1)
        .encode(
            x=alt.X("start_s:Q", title="seconds since the first log line"),
            x2="end_s:Q",
            y=y,
            # One sub-row per stage inside a rank's band: stages that overlap (engine init holds
            # profiling and graph capture) stay visible.
            yOffset=alt.YOffset("stage:N", sort=span_stages),
            color=color,
            tooltip=tooltip,
        )
        .add_params(zoom())
    )
    layers: list[alt.Chart] = [bars]
    if marks is not None:
        layers.append(
            alt.Chart(marks)
            .mark_point(shape="diamond", filled=True, size=110, opacity=1)
            .encode(
                x="at_s:Q",
                y=y,
                color=color,
                tooltip=[
                    "rank:N",
                    "stage:N",
                    alt.Tooltip("at_s:Q", title="at (s since the first line)", format=".1f"),
                ],
            )
        )
    height = max(80, len(ranks) * max(22, 8 * len(span_stages)))
    return alt.layer(*layers).properties(width=WIDTH + 80, height=height, title=title(heading, subtitle))
