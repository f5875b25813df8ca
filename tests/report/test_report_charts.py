"""Chart functions: assert on `chart.to_dict()` (marks, encodings, fields); no rendering."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest
from report_samples import T0, all_charts, degradation_frame, timeline_frames

from logparse import charts as C


def units(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every unit (single-mark) spec inside a layered / concatenated / faceted spec."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from units(child)
    if "spec" in spec:
        yield from units(spec["spec"])


def mark(unit: dict[str, Any]) -> str:
    m = unit["mark"]
    return m if isinstance(m, str) else m["type"]


def by_mark(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [u for u in units(spec) if mark(u) == kind]


def field(unit: dict[str, Any], channel: str) -> str | None:
    return unit.get("encoding", {}).get(channel, {}).get("field")


def dataset(spec: dict[str, Any], unit: dict[str, Any]) -> list[dict[str, Any]]:
    name = unit.get("data", {}).get("name") or spec.get("data", {}).get("name")
    return spec["datasets"][name]


# -- tests --------------------------------------------------------------------------------------------


def test_every_chart_serialises_to_vega_lite() -> None:
    for name, chart in all_charts().items():
        spec = chart.to_dict()
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/"), name
        json.dumps(spec)  # plain JSON, no NaN objects


def test_degradation_line_per_series_labelled_with_n() -> None:
    spec = C.degradation_chart(degradation_frame()).to_dict()
    assert {field(u, "y") for u in units(spec)} == {"per_request_tps"}
    lines = by_mark(spec, "line")
    assert (
        len(lines) == 1 and field(lines[0], "x") == "input_tokens" and field(lines[0], "detail") == "series"
    )
    assert all(
        field(u, "color") == "series" and u["encoding"]["color"]["type"] == "nominal" for u in units(spec)
    )
    texts = by_mark(spec, "text")
    assert {field(u, "text") for u in texts} == {"n_label"}
    x = lines[0]["encoding"]["x"]
    assert x["scale"]["type"] == "log"
    assert x["axis"]["values"] == [64_000, 200_000]
    assert "64K" in x["axis"]["labelExpr"] and "200K" in x["axis"]["labelExpr"]
    tips = {t["title"] for t in by_mark(spec, "point")[0]["encoding"]["tooltip"]}
    assert {"decode tok/s per request", "ms per output token", "context (tokens per request)"} <= tips


def test_degradation_crossover_is_in_the_data_not_computed() -> None:
    spec = C.degradation_chart(degradation_frame()).to_dict()
    rows = dataset(spec, by_mark(spec, "line")[0])
    by = {(r["series"], r["input_tokens"]): r["per_request_tps"] for r in rows}
    # vLLM ahead at 64K, SGLang ahead at 200K: the two lines cross.
    assert by[("vllm", 64_000)] > by[("sglang", 64_000)]
    assert by[("vllm", 200_000)] < by[("sglang", 200_000)]
    assert all("transform" not in u for u in units(spec))


def test_degradation_missing_column_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="per_request_tps"):
        C.degradation_chart(degradation_frame().drop("per_request_tps"))


def test_timeline_shades_windows_and_marks_events() -> None:
    samples, windows, events = timeline_frames()
    spec = C.decode_timeline_chart(samples, windows=windows, events=events).to_dict()
    assert len(spec["vconcat"]) == 3  # throughput, event strip, queue
    rects = by_mark(spec, "rect")
    assert len(rects) == 1 and field(rects[0], "x") == "start" and field(rects[0], "x2") == "end"
    rules = by_mark(spec, "rule")
    assert len(rules) == 1 and field(rules[0], "x") == "time" and field(rules[0], "color") == "event"
    assert {r["event"] for r in dataset(spec, rules[0])} == {"OOM (recovered)", "JIT compile", "preemption"}
    ticks = by_mark(spec, "tick")
    assert field(ticks[0], "y") == "event"
    gen = [u for u in by_mark(spec, "line") if field(u, "y") == "gen_tps"]
    assert len(gen) == 1 and gen[0]["encoding"]["x"]["type"] == "temporal"
    queue = [u for u in by_mark(spec, "line") if field(u, "y") == "requests"]
    assert queue[0]["transform"][0]["fold"] == ["running", "waiting"]
    assert spec["resolve"]["scale"]["x"] == "shared"


def test_timeline_without_windows_or_events() -> None:
    samples, _, _ = timeline_frames()
    spec = C.decode_timeline_chart(samples).to_dict()
    assert len(spec["vconcat"]) == 2
    assert not by_mark(spec, "rect") and not by_mark(spec, "rule")


def test_prefill_curve_encodes_cached_tokens_against_input_tps() -> None:
    spec = all_charts()["prefill"].to_dict()
    line = by_mark(spec, "line")[0]
    assert field(line, "x") == "cached_tokens" and field(line, "y") == "input_tps"
    assert field(line, "detail") == "request" and field(line, "color") == "phase_label"
    assert line["encoding"]["y"]["scale"]["zero"] is False
    points = by_mark(spec, "point")[0]
    assert field(points, "shape") == "chunk_kind"
    assert points["encoding"]["shape"]["scale"]["domain"] == [
        "this request only",
        "shared with the next request",
    ]


def test_spec_charts() -> None:
    charts = all_charts()
    acc = charts["spec_acceptance"].to_dict()
    line = by_mark(acc, "line")[0]
    assert field(line, "y") == "accept_len" and line["encoding"]["x"]["type"] == "temporal"
    floor = by_mark(acc, "rule")[0]
    assert floor["encoding"]["y"]["datum"] == 1.0
    pos = charts["spec_position"].to_dict()
    bar = by_mark(pos, "bar")[0]
    assert field(bar, "x") == "position" and bar["encoding"]["x"]["type"] == "ordinal"
    assert field(bar, "y") == "rate" and bar["encoding"]["y"]["scale"]["domain"] == [0, 1]
    draft = charts["spec_draft"].to_dict()
    bar = by_mark(draft, "bar")[0]
    assert (
        field(bar, "x") == "tps" and field(bar, "color") == "measure" and field(bar, "yOffset") == "measure"
    )
    assert bar["encoding"]["color"]["scale"]["domain"] == ["drafted", "accepted"]


def test_kv_usage_against_the_pool() -> None:
    spec = all_charts()["kv"].to_dict()
    area = by_mark(spec, "area")[0]
    assert field(area, "y") == "used" and area["encoding"]["y"]["axis"]["format"] == "%"
    rule = by_mark(spec, "rule")[0]
    assert field(rule, "y") == "pool"
    assert dataset(spec, rule) == [{"pool": 1.0, "label": "KV pool: 2,687,776 tokens"}]


def test_coldstart_gantt_per_rank() -> None:
    spec = all_charts()["coldstart"].to_dict()
    bar = by_mark(spec, "bar")[0]
    assert field(bar, "x") == "start_s" and field(bar, "x2") == "end_s" and field(bar, "y") == "rank"
    assert field(bar, "color") == "stage"
    assert bar["encoding"]["y"]["sort"] == ["TP0", "TP1", "server"]
    assert bar["encoding"]["color"]["scale"]["domain"] == ["weight loading", "CUDA graph capture", "ready"]
    point = by_mark(spec, "point")[0]
    assert field(point, "x") == "at_s"


def test_memory_split_stacked_per_rank() -> None:
    spec = all_charts()["memory"].to_dict()
    bar = by_mark(spec, "bar")[0]
    assert field(bar, "y") == "rank" and field(bar, "x") == "gib" and bar["encoding"]["x"]["stack"] == "zero"
    assert bar["encoding"]["color"]["scale"]["domain"] == ["weights", "KV cache", "free"]
    assert field(bar, "order") == "order"


def test_bench_metrics_mean_and_p90_per_config_with_slo_rules() -> None:
    spec = all_charts()["bench_metrics"].to_dict()
    panels = [p for row in spec["vconcat"] for p in row["hconcat"]]
    assert [p["title"] for p in panels] == ["TTFT (ms)", "TPS per user (tok/s)"]
    line = by_mark(panels[0], "line")[0]
    assert field(line, "x") == "concurrency" and line["encoding"]["x"]["scale"]["type"] == "log"
    assert field(line, "color") == "config" and field(line, "strokeDash") == "stat"
    assert line["transform"] == [{"filter": "(datum.metric === 'TTFT (ms)')"}]
    rules = by_mark(panels[0], "rule")
    assert field(rules[0], "y") == "threshold"


def test_bench_aggregate_capacity_speedup_slo() -> None:
    charts = all_charts()
    agg = charts["aggregate"].to_dict()
    assert {field(u, "y") for u in units(agg)} == {"aggregate_tps"}
    assert {field(u, "text") for u in by_mark(agg, "text")} == {"label"}
    cap = charts["capacity"].to_dict()
    assert len(cap["hconcat"]) == 2
    bars = by_mark(cap, "bar")
    assert {b["transform"][0]["filter"] for b in bars} == {
        "(datum.measure === 'C_max')",
        "(datum.measure === 'users N')",
    }
    assert all(field(b, "x") == "value" and field(b, "yOffset") == "basis" for b in bars)
    sp = charts["speedup"].to_dict()
    rules = by_mark(sp, "rule")
    assert any(r["encoding"].get("y", {}).get("datum") == 1.0 for r in rules)  # the break-even line
    assert any(field(r, "x") == "concurrency" for r in rules)  # the interpolated break-even
    slo = charts["slo"].to_dict()
    assert slo["facet"]["row"]["field"] == "basis"
    rect = by_mark(slo, "rect")[0]
    assert field(rect, "x") == "concurrency" and rect["encoding"]["x"]["type"] == "ordinal"
    assert field(rect, "color") == "status" and field(by_mark(slo, "text")[0], "text") == "marks"


def test_charts_embed_only_the_encoded_columns() -> None:
    frame = degradation_frame().with_columns(pl.lit("secret").alias("unused"))
    spec = C.degradation_chart(frame).to_dict()
    for rows in spec["datasets"].values():
        assert all("unused" not in r for r in rows)


def test_nan_becomes_null() -> None:
    frame = degradation_frame().with_columns(pl.Series("ms_per_token", [float("nan"), 37.3, 20.0, 61.3]))
    text = json.dumps(C.degradation_chart(frame).to_dict(), allow_nan=False)
    assert "NaN" not in text


def test_importing_logparse_does_not_import_altair() -> None:
    import subprocess
    import sys

    code = (
        "import sys, logparse, logparse.ingest, logparse.cli; "
        "print('altair' in sys.modules, 'vl_convert' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# -- interaction: zoom / pan and the legend that picks runs -------------------------------------------

MULTI_RUN = ("degradation", "decode_overlay", "prefill_overlay", "bench_metrics", "aggregate", "speedup")
ZOOMABLE = {
    "degradation": "input_tokens",
    "decode_overlay": "since_start_s",
    "prefill_overlay": "cached_tokens",
    "timeline": "time",
    "kv": "time",
    "prefill": "cached_tokens",
    "coldstart": "start_s",
}


def params(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every parameter of a spec (top level and in its views), by name."""
    found = {p["name"]: p for p in spec.get("params", [])}
    for unit in units(spec):
        found.update({p["name"]: p for p in unit.get("params", [])})
    return found


def vega_legends(chart: Any) -> list[dict[str, Any]]:
    """The legends of the chart compiled to Vega, as the page's Vega-Lite compiles it."""
    import vl_convert as vlc

    from logparse.report.render import spec

    vega = vlc.vegalite_to_vega(spec(chart))
    out: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        out.extend(node.get("legends", []))
        for child in node.get("marks", []):
            if child.get("type") == "group":
                walk(child)

    walk(vega)
    return out


@pytest.mark.parametrize("name", MULTI_RUN)
def test_multi_run_charts_pick_runs_with_their_legend(name: str) -> None:
    chart = all_charts()[name]
    pick = params(chart.to_dict())[C.PICK]
    assert pick["bind"] == "legend" and pick["select"]["type"] == "point"
    # Vega-Lite makes a legend clickable only when the selection sits where it reads the legend
    # from: the compiled legend entries must be interactive.
    assert any(leg.get("encode", {}).get("symbols", {}).get("interactive") for leg in vega_legends(chart))
    dimmed = [u for u in units(chart.to_dict()) if "condition" in u.get("encoding", {}).get("opacity", {})]
    assert dimmed and all(u["encoding"]["opacity"]["condition"]["param"] == C.PICK for u in dimmed)


@pytest.mark.parametrize(("name", "axis"), ZOOMABLE.items())
def test_time_and_context_axes_zoom_and_pan(name: str, axis: str) -> None:
    spec = all_charts()[name].to_dict()
    zoom = params(spec)[C.ZOOM]
    assert zoom["bind"] == "scales" and zoom["select"] == {"type": "interval", "encodings": ["x"]}
    owners = [u for u in units(spec) if any(p["name"] == C.ZOOM for p in u.get("params", []))]
    views = zoom.get("views", [])
    assert len(owners) + len(views) == 1  # defined once: twice is a duplicate signal in Vega
    assert any(field(u, "x") == axis for u in units(spec))


def test_decode_overlay_one_line_per_run_from_phase_start_broken_at_silences() -> None:
    spec = all_charts()["decode_overlay"].to_dict()
    lines = by_mark(spec, "line")
    assert all(field(u, "x") == "since_start_s" and field(u, "color") == "run" for u in lines)
    assert all([d["field"] for d in u["encoding"]["detail"]] == ["run", "segment"] for u in lines)
    thick = [u for u in lines if u.get("transform")]
    assert thick and thick[0]["transform"] == [{"filter": "(datum.stable === true)"}]
    tips = {t["title"] for t in by_mark(spec, "point")[0]["encoding"]["tooltip"]}
    assert {"since phase start (s)", "generation tok/s"} <= tips


def test_prefill_overlay_a_line_per_request_a_colour_per_run() -> None:
    spec = all_charts()["prefill_overlay"].to_dict()
    line = by_mark(spec, "line")[0]
    assert field(line, "x") == "cached_tokens" and field(line, "color") == "run"
    assert [d["field"] for d in line["encoding"]["detail"]] == ["run", "request"]


def test_kv_area_breaks_at_silences() -> None:
    usage = pl.DataFrame(
        {"time": [T0 + dt.timedelta(seconds=s) for s in (0, 1, 2, 60, 61)], "used": [0.1, 0.2, 0.2, 0.3, 0.3]}
    )
    pool = pl.DataFrame({"pool": [1.0], "label": ["KV pool"]})
    spec = C.kv_usage_chart(usage.with_columns(pl.Series("segment", [0, 0, 0, 1, 1])), pool, unit="fraction")
    area = by_mark(spec.to_dict(), "area")[0]
    assert field(area, "detail") == "segment"
    held = C.kv_usage_chart(usage, pool, unit="fraction").to_dict()
    assert "detail" not in by_mark(held, "area")[0]["encoding"]
