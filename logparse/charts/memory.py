"""Memory split per rank: weights, KV cache, CUDA graphs, activation, non-torch, free."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import WIDTH, chart_data, require, title, unique

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

MEMORY_COLUMNS = ("rank", "component", "gib")
COMPONENT_ORDER = [
    "weights",
    "draft weights",
    "KV cache",
    "draft KV cache",
    "Mamba / SSM state",
    "CUDA graphs",
    "activation (peak)",
    "non-torch",
    "free",
]
COMPONENT_COLORS = [
    "#4c78a8",
    "#9ecae9",
    "#f58518",
    "#ffbf79",
    "#b279a2",
    "#e45756",
    "#eeca3b",
    "#9d755d",
    "#d9d9d9",
]


def memory_split_chart(
    frame: pl.DataFrame,
    *,
    unit: str = "GiB",
    heading: str = "GPU memory per rank",
    subtitle: str | None = None,
) -> alt.Chart:
    """Stacked horizontal bars: what each rank's GPU memory holds, in GiB.

    Parameters
    ----------
    frame
        One row per rank and component: ``rank``, ``component`` (one of `COMPONENT_ORDER`
        ideally), ``gib`` (the amount, in `unit`); optional ``order`` (stack order;
        `COMPONENT_ORDER` index).
    unit
        The unit for the axis: ``GiB`` for both engines (SGLang prints "GB" but counts bytes / 2**30).
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(frame, MEMORY_COLUMNS, chart="memory_split_chart")
    data = chart_data(frame, [*MEMORY_COLUMNS, "order"])
    present = unique(data, "component")
    comps = [c for c in COMPONENT_ORDER if c in present] + [c for c in present if c not in COMPONENT_ORDER]
    colors = [
        COMPONENT_COLORS[COMPONENT_ORDER.index(c)] if c in COMPONENT_ORDER else "#bab0ac" for c in comps
    ]
    ranks = unique(data, "rank")
    enc: dict[str, object] = {
        "y": alt.Y("rank:N", title="rank", sort=ranks),
        "x": alt.X("gib:Q", title=unit, stack="zero"),
        "color": alt.Color(
            "component:N", title="component", sort=comps, scale=alt.Scale(domain=comps, range=colors)
        ),
        "tooltip": ["rank:N", "component:N", alt.Tooltip("gib:Q", title=unit, format=".2f")],
    }
    if "order" in data.columns:
        enc["order"] = alt.Order("order:Q", sort="ascending")
    height = max(60, 22 * len(ranks))
    return (
        alt.Chart(data)
        .mark_bar(height={"band": 0.75})
        .encode(**enc)
        .properties(width=WIDTH, height=height, title=title(heading, subtitle))
    )
