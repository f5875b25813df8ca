"""KV cache usage over time against the size of the pool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import SMALL_HEIGHT, WIDTH, chart_data, require, title, zoom

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

USAGE_COLUMNS = ("time", "used")
POOL_COLUMNS = ("pool", "label")


def kv_usage_chart(
    usage: pl.DataFrame,
    pool: pl.DataFrame,
    *,
    unit: str = "tokens",
    heading: str = "KV cache usage against the pool",
    subtitle: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """KV in use over time as an area, the pool size as a horizontal rule with its label.

    Parameters
    ----------
    usage
        ``time``, ``used`` (KV in use, in `unit`); optional ``segment`` (the area breaks where it
        changes: a silence in the log, drawn as a gap, not held at the last value), ``running``
        and ``kv_tokens`` for the tooltip.
    pool
        One row: ``pool`` (size, same unit), ``label`` (e.g. ``pool 2,687,776 tokens``).
    unit
        Axis unit: ``tokens`` or ``fraction`` (usage 0-1 of the pool when its size is unknown).
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(usage, USAGE_COLUMNS, chart="kv_usage_chart")
    require(pool, POOL_COLUMNS, chart="kv_usage_chart (pool)")
    fmt = "%" if unit == "fraction" else "~s"
    y_title = "KV cache in use (share of the pool)" if unit == "fraction" else "KV cache in use (tokens)"
    data = chart_data(usage, [*USAGE_COLUMNS, "segment", "running", "kv_tokens"])
    used = "KV in use (share of the pool)" if unit == "fraction" else "KV in use (tokens)"
    tooltip = [
        alt.Tooltip("time:T", title="time", format="%H:%M:%S"),
        alt.Tooltip("used:Q", title=used, format=".1%" if unit == "fraction" else ",.0f"),
    ]
    if "running" in data.columns:
        tooltip.append(alt.Tooltip("running:Q", title="requests running"))
    if "kv_tokens" in data.columns:
        tooltip.append(alt.Tooltip("kv_tokens:Q", title="KV tokens printed", format=",.0f"))
    area = (
        alt.Chart(data)
        .mark_area(color="#72b7b2", opacity=0.55, line={"color": "#3a8a84"}, interpolate="step-after")
        .encode(
            x=alt.X("time:T", title="time", axis=alt.Axis(format="%H:%M:%S", labelAngle=0)),
            y=alt.Y(
                "used:Q", title=y_title, axis=alt.Axis(format=fmt), scale=alt.Scale(zero=True), stack=None
            ),
            tooltip=tooltip,
            **({"detail": "segment:N"} if "segment" in data.columns else {}),
        )
        .add_params(zoom())
    )
    pdata = chart_data(pool, POOL_COLUMNS)
    rule = alt.Chart(pdata).mark_rule(color="#e45756", strokeWidth=2, strokeDash=[6, 3]).encode(y="pool:Q")
    text = (
        alt.Chart(pdata)
        .mark_text(align="right", baseline="bottom", dy=-3, color="#b03a3a", fontSize=11)
        .encode(y="pool:Q", x=alt.value(WIDTH), text="label:N")
    )
    return alt.layer(area, rule, text).properties(
        width=WIDTH, height=SMALL_HEIGHT, title=title(heading, subtitle)
    )
