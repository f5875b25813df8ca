"""Decode timeline: generation throughput and the request queue over time, with the stable
windows shaded and OOM / preemption / JIT events as rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import (
    EVENT_COLORS,
    STABLE_FILL,
    WIDTH,
    chart_data,
    require,
    title,
    unique,
    zoom,
)

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

SAMPLE_COLUMNS = ("time", "gen_tps", "running", "waiting")
WINDOW_COLUMNS = ("start", "end", "label")
EVENT_COLUMNS = ("time", "event", "detail")


def decode_timeline_chart(
    samples: pl.DataFrame,
    *,
    windows: pl.DataFrame | None = None,
    events: pl.DataFrame | None = None,
    heading: str = "Decode timeline",
    subtitle: str | None = None,
) -> alt.VConcatChart:
    """Gen throughput over time (top) and running / waiting requests (bottom).

    Parameters
    ----------
    samples
        One row per stats sample: ``time``, ``gen_tps``, ``running``, ``waiting``; optional
        ``segment`` (the lines break where it changes: a silence in the log is a gap).
    windows
        Stable decode windows to shade: ``start``, ``end``, ``label`` (e.g. ``stable N=10``).
    events
        Instants to mark with a rule: ``time``, ``event`` (``OOM``, ``OOM (recovered)``,
        ``preemption``, ``retraction``, ``JIT compile``), ``detail``.
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(samples, SAMPLE_COLUMNS, chart="decode_timeline_chart")
    x_title = "time"

    def time_x(*, labels: bool = True, axis_title: str | None = None) -> alt.X:
        return alt.X(
            "time:T",
            title=axis_title,
            scale=alt.Scale(padding=8),
            axis=alt.Axis(format="%H:%M:%S", labelAngle=0, tickCount=8, labels=labels),
        )

    layers: list[alt.Chart] = []
    if windows is not None and not windows.is_empty():
        require(windows, WINDOW_COLUMNS, chart="decode_timeline_chart (windows)")
        wdata = chart_data(windows, [*WINDOW_COLUMNS, "gen_tps_mean"])
        shade = (
            alt.Chart(wdata)
            .mark_rect(color=STABLE_FILL, opacity=0.16)
            .encode(
                x=alt.X("start:T", title=None),
                x2="end:T",
                tooltip=[
                    alt.Tooltip("label:N", title="window"),
                    alt.Tooltip("start:T", format="%H:%M:%S"),
                    alt.Tooltip("end:T", format="%H:%M:%S"),
                ],
            )
        )
        # a sweep's windows sit side by side: short labels ("N=4*": * untrusted) on three rows
        import polars as pl

        wdata = wdata.with_row_index("_row").with_columns(3 + 12 * (pl.col("_row") % 3))
        if wdata.height > 3:
            wdata = wdata.with_columns(
                pl.col("label").str.replace("^stable ", "").str.replace(r" \(untrusted\)$", "*")
            )
        label = (
            alt.Chart(wdata)
            .mark_text(align="left", baseline="top", dx=3, color="#2e6b2a", fontSize=10)
            .encode(x="start:T", y=alt.Y("_row:Q", scale=None), text="label:N")
        )
        layers += [shade, label]
    sample_data = chart_data(samples, [*SAMPLE_COLUMNS, "segment"])
    gaps = {"detail": "segment:N"} if "segment" in sample_data.columns else {}
    gen = (
        alt.Chart(sample_data)
        .mark_line(color="#4c78a8", strokeWidth=1.6, point=alt.OverlayMarkDef(size=12, color="#4c78a8"))
        .encode(
            x=time_x(),
            y=alt.Y("gen_tps:Q", title="generation tok/s (all requests)"),
            tooltip=[
                alt.Tooltip("time:T", title="time", format="%H:%M:%S"),
                alt.Tooltip("gen_tps:Q", title="generation tok/s", format=".1f"),
                alt.Tooltip("running:Q", title="requests running"),
                alt.Tooltip("waiting:Q", title="requests waiting"),
            ],
            **gaps,
        )
        .add_params(zoom())
    )
    layers.append(gen)
    strip = None
    if events is not None and not events.is_empty():
        require(events, EVENT_COLUMNS, chart="decode_timeline_chart (events)")
        kinds = unique(events, "event")
        scale = alt.Scale(domain=kinds, range=[EVENT_COLORS.get(k, "#7f7f7f") for k in kinds])
        color = alt.Color("event:N", title="event", scale=scale)
        tips = [alt.Tooltip("time:T", format="%H:%M:%S"), "event:N", "detail:N"]
        edata = chart_data(events, EVENT_COLUMNS)
        layers.append(
            alt.Chart(edata)
            .mark_rule(strokeWidth=1.2, opacity=0.55)
            .encode(x="time:T", color=alt.Color("event:N", scale=scale, legend=None), tooltip=tips)
        )
        # The same events one row per kind, so kinds printed at the same instant stay apart.
        strip = (
            alt.Chart(edata)
            .mark_tick(thickness=2, size=14)
            .encode(
                x=time_x(labels=False),
                y=alt.Y("event:N", title=None, sort=kinds),
                color=color,
                tooltip=tips,
            )
            .properties(width=WIDTH + 120, height=20 * len(kinds))
        )
    top = alt.layer(*layers).properties(width=WIDTH + 120, height=220)
    queue = (
        alt.Chart(sample_data)
        .transform_fold(["running", "waiting"], as_=["queue", "requests"])
        .mark_line(strokeWidth=1.5, interpolate="step-after")
        .encode(
            x=time_x(axis_title=x_title),
            y=alt.Y("requests:Q", title="requests"),
            color=alt.Color(
                "queue:N",
                title="requests",
                scale=alt.Scale(domain=["running", "waiting"], range=["#54a24b", "#e45756"]),
            ),
            tooltip=[
                alt.Tooltip("time:T", title="time", format="%H:%M:%S"),
                alt.Tooltip("queue:N", title="queue"),
                alt.Tooltip("requests:Q", title="requests"),
            ],
            **gaps,
        )
        .properties(width=WIDTH + 120, height=110)
    )
    panels = [top, strip, queue] if strip is not None else [top, queue]
    return (
        alt.vconcat(*panels, spacing=10)
        .resolve_scale(x="shared", color="independent")
        .properties(title=title(heading, subtitle))
    )
