"""Client benchmark charts: latency / throughput against concurrency, aggregate output,
capacity (C_max and users N), speculative speedup with its break-even, and the SLO heatmap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import (
    HEIGHT,
    SMALL_HEIGHT,
    SMALL_WIDTH,
    WIDTH,
    chart_data,
    color_scale,
    legend_pick,
    picked,
    reference_rule,
    require,
    title,
    unique,
)

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

METRIC_COLUMNS = ("config", "concurrency", "metric", "stat", "value")
SLO_COLUMNS = ("metric", "threshold", "label")
AGGREGATE_COLUMNS = ("config", "concurrency", "aggregate_tps")
MEASURED_COLUMN = "output_throughput_tps"  # the file's own output throughput, beside the estimate
CAPACITY_COLUMNS = ("config", "basis", "measure", "value")
SPEEDUP_COLUMNS = ("series", "concurrency", "ratio")
BREAK_EVEN_COLUMNS = ("series", "concurrency", "label")
SLO_MATRIX_COLUMNS = ("config", "concurrency", "status", "marks")

SLO_STATUSES = ["meets both SLOs", "TTFT fails", "TPS fails", "both fail", "not judged"]
SLO_COLORS = ["#a1d99b", "#fdae6b", "#fdd0a2", "#fc9272", "#e0e0e0"]


def _concurrency_axis(frame: pl.DataFrame, column: str = "concurrency") -> alt.X:
    import altair as alt

    ticks = sorted({int(v) for v in frame.get_column(column).drop_nulls().to_list()})
    return alt.X(
        f"{column}:Q",
        title="concurrency (requests in flight)",
        scale=alt.Scale(type="log", base=2, nice=False, padding=14),
        axis=alt.Axis(values=ticks, format="d", labelFlush=False),
    )


def bench_metric_chart(
    frame: pl.DataFrame,
    *,
    metric: str,
    slo: pl.DataFrame | None = None,
    width: int = SMALL_WIDTH,
    height: int = SMALL_HEIGHT,
    pick: alt.Parameter | None = None,
    owns_pick: bool = True,
) -> alt.LayerChart | alt.FacetChart:
    """One metric against concurrency: a line per configuration, solid mean and dashed P90.

    Parameters
    ----------
    frame
        Long table: ``config``, ``concurrency``, ``metric``, ``stat`` (``mean`` / ``P90``),
        ``value``. Only the rows of `metric` are drawn.
    metric
        The ``metric`` value to draw (also the panel title and y axis).
    slo
        Thresholds to draw as rules: ``metric``, ``threshold``, ``label``.
    width, height
        Panel size.
    pick, owns_pick
        The legend selection of configurations (default: a new one); `owns_pick` False when
        another panel of the same chart defines it (a selection is defined in one view only).
    """
    import altair as alt

    require(frame, METRIC_COLUMNS, chart="bench_metric_chart")
    pick = pick if pick is not None else legend_pick("config")
    data = chart_data(frame, METRIC_COLUMNS)
    configs = unique(data, "config")
    base = (
        alt.Chart(data)
        .transform_filter(alt.datum.metric == metric)
        .encode(
            x=_concurrency_axis(data),
            y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=True)),
            color=alt.Color("config:N", title="configuration", scale=color_scale(configs), sort=configs),
            detail="stat:N",
            opacity=picked(pick),
        )
    )
    dash = alt.StrokeDash(
        "stat:N",
        title="statistic",
        sort=["mean", "P90"],
        scale=alt.Scale(domain=["mean", "P90"], range=[[1, 0], [5, 3]]),
        legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2, symbolSize=300),
    )
    tooltip = [
        alt.Tooltip("config:N", title="configuration"),
        alt.Tooltip("concurrency:Q", title="concurrency (requests in flight)"),
        alt.Tooltip("stat:N", title="statistic"),
        alt.Tooltip("value:Q", title=metric, format=",.2f"),
    ]
    # The legend selection lives on the first layer (Vega-Lite binds a layer chart's legend there).
    line = base.mark_line(strokeWidth=1.8).encode(strokeDash=dash)
    layers: list[alt.Chart] = [
        line.add_params(pick) if owns_pick else line,
        base.mark_point(filled=True, size=22).encode(tooltip=tooltip),
    ]
    if slo is not None and metric in unique(slo, "metric"):
        require(slo, SLO_COLUMNS, chart="bench_metric_chart (slo)")
        sdata = chart_data(slo, SLO_COLUMNS)
        rule = alt.Chart(sdata).transform_filter(alt.datum.metric == metric)
        layers.append(rule.mark_rule(color="#d62728", strokeDash=[2, 2]).encode(y="threshold:Q"))
        layers.append(
            rule.mark_text(align="left", baseline="bottom", dx=2, dy=-2, color="#d62728", fontSize=10).encode(
                y="threshold:Q", x=alt.value(0), text="label:N"
            )
        )
    return alt.layer(*layers).properties(width=width, height=height, title=metric)


def bench_metrics_chart(
    frame: pl.DataFrame,
    *,
    slo: pl.DataFrame | None = None,
    columns: int = 2,
    heading: str = "Client metrics against concurrency",
    subtitle: str | None = None,
) -> alt.VConcatChart:
    """A grid of `bench_metric_chart` panels, one per ``metric`` value in first-seen order."""
    import altair as alt

    require(frame, METRIC_COLUMNS, chart="bench_metrics_chart")
    metrics = unique(frame, "metric")
    pick = legend_pick("config")
    panels = [
        bench_metric_chart(frame, metric=m, slo=slo, pick=pick, owns_pick=i == 0)
        for i, m in enumerate(metrics)
    ]
    rows = [alt.hconcat(*panels[i : i + columns], spacing=24) for i in range(0, len(panels), columns)]
    return alt.vconcat(*rows, spacing=16).properties(title=title(heading, subtitle))


def aggregate_output_chart(
    frame: pl.DataFrame,
    *,
    peaks: pl.DataFrame | None = None,
    heading: str = "Aggregate output against concurrency",
    subtitle: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Aggregate output (per-user TPS × concurrency, an estimate) per configuration, as lines;
    peaks marked and labelled; where the frame has the file's own measured output throughput
    (``output_throughput_tps``), it is drawn beside the estimate as hollow squares.

    Parameters
    ----------
    frame
        ``config``, ``concurrency``, ``aggregate_tps``; optional ``output_throughput_tps``.
    peaks
        One row per configuration: ``config``, ``concurrency``, ``aggregate_tps``, ``label``.
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(frame, AGGREGATE_COLUMNS, chart="aggregate_output_chart")
    data = chart_data(frame, [*AGGREGATE_COLUMNS, MEASURED_COLUMN])
    configs = unique(data, "config")
    color = alt.Color("config:N", title="configuration", scale=color_scale(configs), sort=configs)
    x = _concurrency_axis(data)
    y = alt.Y("aggregate_tps:Q", title="aggregate output tok/s")
    pick = legend_pick("config")
    base = alt.Chart(data).encode(x=x, y=y, color=color, opacity=picked(pick))
    layers: list[alt.Chart] = [
        base.mark_line(strokeWidth=2).add_params(pick),
        base.mark_point(filled=True, size=30).encode(
            tooltip=[
                alt.Tooltip("config:N", title="configuration"),
                alt.Tooltip("concurrency:Q", title="concurrency (requests in flight)"),
                alt.Tooltip("aggregate_tps:Q", title="aggregate output tok/s (estimate)", format=",.0f"),
            ]
        ),
    ]
    if MEASURED_COLUMN in data.columns and data.get_column(MEASURED_COLUMN).drop_nulls().len():
        measured = alt.Tooltip(f"{MEASURED_COLUMN}:Q", title="measured tok/s (file)", format=",.1f")
        layers.append(
            base.mark_point(shape="square", size=60, strokeWidth=1.5, filled=False).encode(
                y=alt.Y(f"{MEASURED_COLUMN}:Q"), tooltip=["config:N", "concurrency:Q", measured]
            )
        )
    if peaks is not None and not peaks.is_empty():
        require(
            peaks, ("config", "concurrency", "aggregate_tps", "label"), chart="aggregate_output_chart (peaks)"
        )
        pdata = chart_data(peaks, ["config", "concurrency", "aggregate_tps", "label"])
        pbase = alt.Chart(pdata).encode(x=alt.X("concurrency:Q"), y=alt.Y("aggregate_tps:Q"), color=color)
        layers.append(pbase.mark_point(shape="circle", size=170, strokeWidth=2, filled=False))
        layers.append(pbase.mark_text(align="right", dx=-10, dy=-8, fontSize=10).encode(text="label:N"))
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT, title=title(heading, subtitle))


def capacity_chart(
    frame: pl.DataFrame, *, heading: str = "Capacity at the SLOs", subtitle: str | None = None
) -> alt.HConcatChart:
    """Two bar panels per configuration: C_max (highest concurrency meeting every SLO) and the
    user count N it serves, each on the P90 and the mean basis.

    Parameters
    ----------
    frame
        Long table: ``config``, ``basis`` (``P90`` / ``mean``), ``measure`` (``C_max`` /
        ``users N``), ``value`` (null when no tested level meets the SLOs).
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(frame, CAPACITY_COLUMNS, chart="capacity_chart")
    data = chart_data(frame, CAPACITY_COLUMNS)
    configs = unique(data, "config")
    bases = [b for b in ("P90", "mean") if b in unique(data, "basis")] or unique(data, "basis")

    def panel(measure: str, axis_title: str) -> alt.LayerChart | alt.FacetChart:
        base = (
            alt.Chart(data)
            .transform_filter(alt.datum.measure == measure)
            .encode(
                y=alt.Y("config:N", title=None, sort=configs),
                yOffset=alt.YOffset("basis:N", sort=bases),
                x=alt.X("value:Q", title=axis_title),
            )
        )
        bars = base.mark_bar(height={"band": 0.9}).encode(
            color=alt.Color(
                "basis:N",
                title="SLO judged at",
                sort=bases,
                scale=alt.Scale(domain=bases, range=["#4c78a8", "#9ecae9"][: len(bases)]),
            ),
            tooltip=["config:N", "basis:N", alt.Tooltip("value:Q", title=measure, format=",.0f")],
        )
        text = base.mark_text(align="left", dx=3, fontSize=10).encode(text=alt.Text("value:Q", format=",.0f"))
        return alt.layer(bars, text).properties(
            width=SMALL_WIDTH - 40, height=max(90, 44 * len(configs)), title=axis_title
        )

    return alt.hconcat(
        panel("C_max", "C_max (concurrency)"), panel("users N", "users N at the think time"), spacing=20
    ).properties(title=title(heading, subtitle))


def spec_speedup_chart(
    frame: pl.DataFrame,
    *,
    break_even: pl.DataFrame | None = None,
    heading: str = "Speculative decoding speedup",
    subtitle: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Spec / direct per-user TPS ratio against concurrency, a rule at 1.0 (break-even line),
    and a vertical rule at each pair's interpolated break-even concurrency.

    Parameters
    ----------
    frame
        ``series`` (engine / pair), ``concurrency``, ``ratio``.
    break_even
        ``series``, ``concurrency`` (interpolated, may be fractional), ``label``.
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(frame, SPEEDUP_COLUMNS, chart="spec_speedup_chart")
    data = chart_data(frame, [*SPEEDUP_COLUMNS, "direct_tps", "spec_tps"])
    series = unique(data, "series")
    color = alt.Color("series:N", title="engine", scale=color_scale(series), sort=series)
    pick = legend_pick("series")
    base = alt.Chart(data).encode(
        x=_concurrency_axis(data),
        y=alt.Y("ratio:Q", title="spec TPS / direct TPS", axis=alt.Axis(format=".2~f")),
        color=color,
        opacity=picked(pick),
    )
    tooltip = [
        alt.Tooltip("series:N", title="engine"),
        alt.Tooltip("concurrency:Q", title="concurrency (requests in flight)"),
        alt.Tooltip("ratio:Q", title="speedup (spec / direct TPS)", format=".2f"),
    ]
    tooltip += [
        alt.Tooltip(f"{c}:Q", title=f"{c.split('_')[0]} TPS per user (tok/s)", format=".1f")
        for c in ("direct_tps", "spec_tps")
        if c in data.columns
    ]
    layers: list[alt.Chart] = [
        base.mark_line(strokeWidth=2).add_params(pick),
        base.mark_point(filled=True, size=40).encode(tooltip=tooltip),
        reference_rule(y=1.0, color="#555555"),
    ]
    if break_even is not None and not break_even.is_empty():
        require(break_even, BREAK_EVEN_COLUMNS, chart="spec_speedup_chart (break_even)")
        bdata = chart_data(break_even, BREAK_EVEN_COLUMNS)
        bbase = alt.Chart(bdata).encode(x=alt.X("concurrency:Q"), color=color)
        layers.append(bbase.mark_rule(strokeDash=[5, 3], strokeWidth=1.5))
        layers.append(
            bbase.mark_text(align="left", dx=4, baseline="top", fontSize=10).encode(
                y=alt.value(4), text="label:N"
            )
        )
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT, title=title(heading, subtitle))


def slo_heatmap_chart(
    frame: pl.DataFrame,
    *,
    heading: str = "SLO compliance",
    subtitle: str | None = None,
    cell: tuple[int, int] = (54, 30),
) -> alt.FacetChart | alt.LayerChart:
    """A cell per configuration × concurrency coloured by SLO status, with ✓/✗ marks.

    Parameters
    ----------
    frame
        ``config``, ``concurrency``, ``status`` (one of `SLO_STATUSES`), ``marks`` (e.g. ``✓✗``:
        TTFT then TPS); optional ``basis`` (one row of cells per basis), ``ttft_ms``, ``tps``.
    heading, subtitle
        The chart title.
    cell
        Width and height of a cell in pixels.
    """
    import altair as alt

    require(frame, SLO_MATRIX_COLUMNS, chart="slo_heatmap_chart")
    data = chart_data(frame, [*SLO_MATRIX_COLUMNS, "basis", "ttft_ms", "tps"])
    configs = unique(data, "config")
    levels = sorted({int(v) for v in data.get_column("concurrency").drop_nulls().to_list()})
    present = [s for s in SLO_STATUSES if s in unique(data, "status")]
    colors = [SLO_COLORS[SLO_STATUSES.index(s)] for s in present]
    tooltip: list[str | alt.Tooltip] = [
        alt.Tooltip("config:N", title="configuration"),
        alt.Tooltip("concurrency:O", title="concurrency (requests in flight)"),
        alt.Tooltip("status:N", title="SLO status"),
    ]
    units = {"ttft_ms": "TTFT (ms)", "tps": "TPS per user (tok/s)"}
    tooltip += [
        alt.Tooltip(f"{c}:Q", title=units[c], format=",.1f") for c in ("ttft_ms", "tps") if c in data.columns
    ]
    faceted = "basis" in data.columns
    base = (alt.Chart() if faceted else alt.Chart(data)).encode(
        x=alt.X("concurrency:O", title="concurrency", sort=levels, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("config:N", title=None, sort=configs),
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color(
            "status:N",
            title="status (TTFT, TPS)",
            sort=present,
            scale=alt.Scale(domain=present, range=colors),
        ),
        tooltip=tooltip,
    )
    marks = base.mark_text(fontSize=13).encode(text="marks:N")
    size = {
        "width": max(4 * cell[0], cell[0] * len(levels)),
        "height": max(2 * cell[1], cell[1] * len(configs)),
    }
    if faceted:
        return (
            alt.layer(cells, marks, data=data)
            .properties(**size)
            .facet(
                row=alt.Row(
                    "basis:N",
                    title="SLO judged at",
                    sort=["P90", "mean"],
                    header=alt.Header(labelAngle=0, labelAlign="left", labelFontWeight="bold"),
                ),
            )
            .properties(title=title(heading, subtitle))
        )
    return alt.layer(cells, marks).properties(**size, title=title(heading, subtitle))
