"""Several runs on one chart: decode throughput from each phase's start, and prefill chunk
throughput against the context already cached, one colour per run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import (
    HEIGHT,
    WIDTH,
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

DECODE_OVERLAY_COLUMNS = ("run", "since_start_s", "gen_tps")
PREFILL_OVERLAY_COLUMNS = ("run", "request", "cached_tokens", "input_tps")
OVERLAY_WIDTH = WIDTH + 260


def decode_overlay_chart(
    frame: pl.DataFrame,
    *,
    heading: str = "Decode throughput of every run from its phase's start",
    subtitle: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Generation tok/s of every run against the seconds since its phase started, one line per run.

    Parameters
    ----------
    frame
        One row per stats sample: ``run`` (the line's name: a run, or a run's phase),
        ``since_start_s`` (seconds since the phase's start), ``gen_tps``; optional ``segment``
        (a line breaks where it changes: a silence in the log), ``stable`` (inside the stable
        window: drawn thick), ``running``, ``waiting``, ``time`` and ``phase`` for the tooltip.
    heading, subtitle
        The chart title.

    The time axis zooms and pans; the legend picks runs (shift-click for several).
    """
    import altair as alt

    require(frame, DECODE_OVERLAY_COLUMNS, chart="decode_overlay_chart")
    columns = [*DECODE_OVERLAY_COLUMNS, "segment", "stable", "running", "waiting", "time", "phase"]
    data = chart_data(frame, columns)
    runs = unique(data, "run")
    pick = legend_pick("run")
    base = alt.Chart(data).encode(
        x=alt.X(
            "since_start_s:Q",
            title="seconds since the phase started",
            scale=alt.Scale(nice=False),
            axis=alt.Axis(labelFlush=False),  # a flush last label runs into the one before it
        ),
        y=alt.Y("gen_tps:Q", title="generation tok/s (all requests)", scale=alt.Scale(zero=True)),
        color=alt.Color("run:N", title="run", scale=color_scale(runs), sort=runs),
        opacity=picked(pick),
    )
    detail = ["run:N", "segment:N"] if "segment" in data.columns else ["run:N"]
    tooltip: list[alt.Tooltip] = [
        alt.Tooltip("run:N", title="run"),
        alt.Tooltip("since_start_s:Q", title="since phase start (s)", format=",.0f"),
        alt.Tooltip("gen_tps:Q", title="generation tok/s", format=",.1f"),
    ]
    for column, label in (("running", "requests running"), ("waiting", "requests waiting")):
        if column in data.columns:
            tooltip.append(alt.Tooltip(f"{column}:Q", title=label))
    if "time" in data.columns:
        tooltip.append(alt.Tooltip("time:T", title="time in the log", format="%H:%M:%S"))
    # The legend selection lives on the first layer (Vega-Lite binds a layer chart's legend there).
    layers: list[alt.Chart] = [base.mark_line(strokeWidth=1.6).encode(detail=detail).add_params(pick)]
    if "stable" in data.columns:
        layers.append(
            base.transform_filter(alt.datum.stable == True)  # noqa: E712  (a Vega expression)
            .mark_line(strokeWidth=4.5)
            .encode(detail=detail)
        )
    layers.append(base.mark_point(filled=True, size=24).encode(tooltip=tooltip).add_params(zoom()))
    return alt.layer(*layers).properties(width=OVERLAY_WIDTH, height=HEIGHT, title=title(heading, subtitle))


def prefill_overlay_chart(
    frame: pl.DataFrame,
    *,
    heading: str = "Prefill chunk throughput against the context already cached, every run",
    subtitle: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Chunk input tok/s against the tokens cached before the chunk; a line per request, a colour
    per run.

    Parameters
    ----------
    frame
        One row per prefill chunk: ``run``, ``request`` (id within the run), ``cached_tokens``,
        ``input_tps``; optional ``chunk`` (index in the request), ``new_token`` and
        ``phase_label`` for the tooltip.
    heading, subtitle
        The chart title.

    The context axis zooms and pans; the legend picks runs.
    """
    import altair as alt

    require(frame, PREFILL_OVERLAY_COLUMNS, chart="prefill_overlay_chart")
    data = chart_data(frame, [*PREFILL_OVERLAY_COLUMNS, "chunk", "new_token", "phase_label"])
    runs = unique(data, "run")
    pick = legend_pick("run")
    base = alt.Chart(data).encode(
        x=alt.X(
            "cached_tokens:Q",
            title="tokens already cached before the chunk (context)",
            axis=alt.Axis(labelExpr="datum.value == 0 ? '0' : format(datum.value, '~s')"),
        ),
        y=alt.Y("input_tps:Q", title="chunk input tok/s", scale=alt.Scale(zero=False)),
        color=alt.Color("run:N", title="run", scale=color_scale(runs), sort=runs),
        opacity=picked(pick),
    )
    tooltip = [
        alt.Tooltip("run:N", title="run"),
        alt.Tooltip("request:N", title="request"),
        alt.Tooltip("cached_tokens:Q", title="cached before the chunk (tokens)", format=","),
        alt.Tooltip("input_tps:Q", title="chunk input tok/s", format=",.0f"),
    ]
    if "chunk" in data.columns:
        tooltip.insert(2, alt.Tooltip("chunk:Q", title="chunk (0 = first)"))
    if "new_token" in data.columns:
        tooltip.append(alt.Tooltip("new_token:Q", title="chunk size (tokens)", format=","))
    lines = base.mark_line(strokeWidth=1.4).encode(detail=["run:N", "request:N"]).add_params(pick)
    points = base.mark_point(filled=True, size=36).encode(tooltip=tooltip).add_params(zoom())
    return alt.layer(lines, points).properties(
        width=OVERLAY_WIDTH, height=HEIGHT, title=title(heading, subtitle)
    )
