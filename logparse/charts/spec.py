"""Speculative decoding: acceptance length over time, per-position acceptance, drafted vs accepted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.charts._base import (
    SMALL_HEIGHT,
    WIDTH,
    chart_data,
    color_scale,
    reference_rule,
    require,
    title,
    unique,
)

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

ACCEPT_COLUMNS = ("time", "accept_len")
POSITION_COLUMNS = ("position", "rate", "phase_label")
DRAFT_COLUMNS = ("phase_label", "measure", "tps")


def spec_acceptance_chart(
    frame: pl.DataFrame, *, heading: str = "Acceptance length over time", subtitle: str | None = None
) -> alt.LayerChart | alt.FacetChart:
    """Mean acceptance length (tokens per verification step, bonus token included) over time.

    Parameters
    ----------
    frame
        ``time``, ``accept_len``; optional ``phase_label`` (colour).
    heading, subtitle
        The chart title.

    A rule at 1.0 marks "nothing accepted": every step emits only the bonus token.
    """
    import altair as alt

    require(frame, ACCEPT_COLUMNS, chart="spec_acceptance_chart")
    data = chart_data(frame, [*ACCEPT_COLUMNS, "phase_label", "accept_rate"])
    enc: dict[str, object] = {
        "x": alt.X("time:T", title="time", axis=alt.Axis(format="%H:%M:%S", labelAngle=0)),
        "y": alt.Y(
            "accept_len:Q",
            title="tokens per step (accepted + bonus)",
            scale=alt.Scale(zero=False, padding=10),
        ),
        "tooltip": [alt.Tooltip("time:T", format="%H:%M:%S"), alt.Tooltip("accept_len:Q", format=".2f")],
    }
    if "phase_label" in data.columns:
        phases = unique(data, "phase_label")
        enc["color"] = alt.Color("phase_label:N", title="phase", scale=color_scale(phases), sort=phases)
    line = alt.Chart(data).mark_line(strokeWidth=1.5, point=alt.OverlayMarkDef(size=14)).encode(**enc)
    floor = reference_rule(y=1.0)
    return alt.layer(line, floor).properties(width=WIDTH, height=SMALL_HEIGHT, title=title(heading, subtitle))


def spec_position_chart(
    frame: pl.DataFrame, *, heading: str = "Acceptance rate per draft position", subtitle: str | None = None
) -> alt.LayerChart | alt.FacetChart:
    """Bars of the acceptance rate of each draft position (1 = first drafted token), per phase.

    Parameters
    ----------
    frame
        ``position`` (1-based), ``rate`` (0-1), ``phase_label``.
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(frame, POSITION_COLUMNS, chart="spec_position_chart")
    data = chart_data(frame, POSITION_COLUMNS)
    phases = unique(data, "phase_label")
    base = alt.Chart(data).encode(
        x=alt.X("position:O", title="draft position", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("phase_label:N", sort=phases),
        y=alt.Y("rate:Q", title="acceptance rate", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("phase_label:N", title="phase", scale=color_scale(phases), sort=phases),
        tooltip=["phase_label:N", "position:O", alt.Tooltip("rate:Q", format=".1%")],
    )
    text = base.mark_text(dy=-6, fontSize=10, color="#333333").encode(text=alt.Text("rate:Q", format=".0%"))
    return alt.layer(bars, text).properties(width=WIDTH, height=SMALL_HEIGHT, title=title(heading, subtitle))


def spec_draft_chart(
    frame: pl.DataFrame, *, heading: str = "Drafted vs accepted draft tokens", subtitle: str | None = None
) -> alt.LayerChart | alt.FacetChart:
    """Per phase, drafted and accepted draft-token throughput side by side (the gap is waste).

    Parameters
    ----------
    frame
        ``phase_label``, ``measure`` (``drafted`` / ``accepted``), ``tps``; optional ``label``
        (text at the bar end, e.g. ``21 tok/s accepted: 98% of drafts rejected``).
    heading, subtitle
        The chart title.
    """
    import altair as alt

    require(frame, DRAFT_COLUMNS, chart="spec_draft_chart")
    data = chart_data(frame, [*DRAFT_COLUMNS, "label"])
    phases = unique(data, "phase_label")
    base = alt.Chart(data).encode(
        y=alt.Y("phase_label:N", title=None, sort=phases),
        yOffset=alt.YOffset("measure:N", sort=["drafted", "accepted"]),
        x=alt.X("tps:Q", title="draft tokens per second"),
    )
    bars = base.mark_bar(height={"band": 0.9}).encode(
        color=alt.Color(
            "measure:N",
            title=None,
            sort=["drafted", "accepted"],
            scale=alt.Scale(domain=["drafted", "accepted"], range=["#bab0ac", "#54a24b"]),
            legend=alt.Legend(orient="bottom", direction="horizontal"),
        ),
        tooltip=["phase_label:N", "measure:N", alt.Tooltip("tps:Q", format=",.1f")],
    )
    layers: list[alt.Chart] = [bars]
    if "label" in data.columns:
        layers.append(base.mark_text(align="left", dx=4, fontSize=10, color="#333333").encode(text="label:N"))
    height = max(70, 56 * len(phases))
    return alt.layer(*layers).properties(width=WIDTH, height=height, title=title(heading, subtitle))
