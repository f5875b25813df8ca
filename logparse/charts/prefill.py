"""Prefill chunk curve: input throughput of each chunk against the context already cached."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import WIDTH, chart_data, color_scale, require, title, unique, zoom

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

CHUNK_COLUMNS = ("request", "chunk", "cached_tokens", "input_tps", "phase_label")


def prefill_chunk_chart(
    chunks: pl.DataFrame, *, heading: str = "Prefill throughput across chunks", subtitle: str | None = None
) -> alt.LayerChart | alt.FacetChart:
    """One line per request: chunk input tok/s against the tokens cached before the chunk.

    Parameters
    ----------
    chunks
        One row per prefill chunk: ``request`` (id), ``chunk`` (index in the request),
        ``cached_tokens`` (context before the chunk), ``input_tps``, ``phase_label`` (colour;
        e.g. ``phase 1 (N=10)``); optional ``new_token`` and ``chunk_kind`` (point shape:
        ``this request only`` / ``shared with the next request``).
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(chunks, CHUNK_COLUMNS, chart="prefill_chunk_chart")
    data = chart_data(chunks, [*CHUNK_COLUMNS, "new_token", "chunk_kind"]).sort("request", "chunk")
    phases = unique(data, "phase_label")
    base = alt.Chart(data).encode(
        x=alt.X(
            "cached_tokens:Q",
            title="tokens already cached before the chunk (context)",
            axis=alt.Axis(labelExpr="datum.value == 0 ? '0' : format(datum.value, '~s')"),
        ),
        y=alt.Y("input_tps:Q", title="chunk input tok/s", scale=alt.Scale(zero=False)),
        color=alt.Color("phase_label:N", title="phase", scale=color_scale(phases), sort=phases),
        detail="request:N",
    )
    tooltip = [
        alt.Tooltip("request:N", title="request"),
        alt.Tooltip("chunk:Q", title="chunk (0 = first)"),
        alt.Tooltip("cached_tokens:Q", title="cached before the chunk (tokens)", format=","),
        alt.Tooltip("input_tps:Q", title="chunk input tok/s", format=",.0f"),
    ]
    if "new_token" in data.columns:
        tooltip.append(alt.Tooltip("new_token:Q", title="chunk size (tokens)", format=","))
    lines = base.mark_line(strokeWidth=1.3, opacity=0.7)
    points = base.mark_point(filled=True, size=45, opacity=0.9).encode(tooltip=tooltip)
    if "chunk_kind" in data.columns:
        kinds = ["this request only", "shared with the next request"]
        points = points.encode(
            shape=alt.Shape(
                "chunk_kind:N",
                title="chunk",
                sort=kinds,
                scale=alt.Scale(domain=kinds, range=["circle", "diamond"]),
            ),
            tooltip=[*tooltip, alt.Tooltip("chunk_kind:N", title="chunk")],
        )
    return alt.layer(lines, points.add_params(zoom())).properties(
        width=WIDTH, height=260, title=title(heading, subtitle)
    )
