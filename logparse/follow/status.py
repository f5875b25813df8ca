"""What a followed run is doing now: the latest stats lines' numbers, the phase and its stable window.

The numbers are the engine's own, from its latest stats line of each DP engine / group (summed as
the summary sums them: `samples.rank_samples`); the phase and its stable window are those the
summary's rule gives for the lines read so far (`analysis.analyze_start` on the current engine
start), recomputed as often as the cost budget allows (`sink.FollowSink`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, cast

import polars as pl

from logparse.analysis import samples as samples_mod

RECENT_ROWS = 256  # the stats lines looked at for the current numbers
STALE_FACTOR = 2.5  # a DP series whose latest line is older than this many intervals is idle


@dataclass(frozen=True)
class Window:
    """The stable decode window of the current phase, as `windows.stable_windows` gives it."""

    phase: int
    concurrency: int | None
    gen_tps: float
    per_request_tps: float | None
    duration_s: float
    samples: int
    cv: float | None
    trusted: bool
    note: str | None
    first_line: int
    last_line: int

    @classmethod
    def of(cls, row: Mapping[str, Any], phase: int) -> Window:
        """From a `WINDOW_SCHEMA` row, numbered `phase`."""
        return cls(
            phase=phase,
            concurrency=row["concurrency"],
            gen_tps=float(row["gen_tps_mean"]),
            per_request_tps=row["per_request_tps"],
            duration_s=float(row["duration_s"] or 0.0),
            samples=int(row["samples"]),
            cv=row["cv"],
            trusted=bool(row["trusted"]),
            note=row["note"],
            first_line=int(row["first_line"]),
            last_line=int(row["last_line"]),
        )

    def text(self) -> str:
        """`stable: 1,234 tok/s over 90 s, cv 2 %` (or why it is not trusted yet)."""
        cv = "cv ?" if self.cv is None else f"cv {self.cv * 100:.0f} %"
        figures = f"{self.gen_tps:,.0f} tok/s over {self.duration_s:,.0f} s, {cv}"
        if self.trusted:
            return f"stable: {figures}"
        return f"stable (not trusted yet): {figures}; {self.note or ''}".rstrip("; ")


@dataclass(frozen=True)
class Status:
    """One status update."""

    source: str
    engine: str
    version: str | None
    lines: int  # lines read so far
    line_no: int | None  # the latest stats line
    time: dt.datetime | None  # its time (UTC)
    phase: int | None
    concurrency: int | None  # the phase's N
    running: int | None
    waiting: int | None
    gen_tps: float | None
    prefill_tps: float | None
    kv_usage: float | None  # 0-1
    spec_accept_len: float | None
    spec_accept_rate: float | None  # 0-1
    window: Window | None

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of the update (`"type": "status"`)."""
        out: dict[str, Any] = {"type": "status"}
        out.update(asdict(self))
        out["time"] = None if self.time is None else _iso(self.time)
        out["stable"] = out.pop("window")
        return out

    def line(self) -> str:
        """The plain one-line form (output that is not a terminal)."""
        parts = [
            f"{clock_text(self.time)} line {self.line_no or '-'}",
            f"phase {self.phase if self.phase is not None else '-'}"
            + (f" N={self.concurrency}" if self.concurrency else ""),
            f"running {number_text(self.running)} waiting {number_text(self.waiting)}",
            f"gen {number_text(self.gen_tps, 1)} tok/s",
            f"prefill {number_text(self.prefill_tps, 1)} tok/s",
            f"KV {percent_text(self.kv_usage)}",
        ]
        if self.spec_accept_len is not None or self.spec_accept_rate is not None:
            parts.append(
                f"spec accept {number_text(self.spec_accept_len, 2)} ({percent_text(self.spec_accept_rate)})"
            )
        if self.window is not None:
            parts.append(self.window.text())
        return " | ".join(parts)


def current_numbers(tables: Mapping[str, pl.DataFrame], *, engine: str) -> dict[str, Any]:
    """``line_no``, ``time``, ``running``, ``waiting``, ``gen_tps``, ``prefill_tps``, ``kv_usage``,
    ``spec_accept_len``, ``spec_accept_rate`` from the latest stats line of each busy series."""
    recent = {kind: frame.tail(RECENT_ROWS) for kind, frame in tables.items() if kind in _STATS}
    ranks = samples_mod.rank_samples(recent, engine=engine, pool_tokens=None)
    out: dict[str, Any] = dict.fromkeys(_NUMBERS)
    if ranks.is_empty():
        return out
    latest = ranks.sort("line_no").group_by("series", maintain_order=True).last()
    newest = cast("dt.datetime | None", latest["time"].max())
    step = _interval(ranks)
    if step is not None and newest is not None:
        latest = latest.filter(pl.col("time") >= newest - dt.timedelta(seconds=STALE_FACTOR * step))
    last = ranks.sort("line_no").row(-1, named=True)
    out.update(
        line_no=last["line_no"],
        time=last["time"],
        running=_int(latest["running"].sum()),
        waiting=_int(latest["waiting"].sum()),
        gen_tps=_float(latest["gen_tps"].sum()) if latest["gen_tps"].is_not_null().any() else None,
        kv_usage=_float(latest["kv_usage"].mean()),
        spec_accept_len=_float(latest["accept_len"].mean()),
        spec_accept_rate=_float(latest["accept_rate"].mean()),
    )
    if engine == "vllm":
        out["prefill_tps"] = (
            _float(latest["prompt_tps"].sum()) if latest["prompt_tps"].is_not_null().any() else None
        )
        out.update(_vllm_spec(recent.get("spec_decode")))
    else:
        out["prefill_tps"] = _sglang_prefill(recent.get("prefill_batch"), latest)
    return out


_STATS = ("engine_stats", "decode_batch", "prefill_batch", "spec_decode")
_NUMBERS = (
    "line_no",
    "time",
    "running",
    "waiting",
    "gen_tps",
    "prefill_tps",
    "kv_usage",
    "spec_accept_len",
    "spec_accept_rate",
)


def _vllm_spec(spec: pl.DataFrame | None) -> dict[str, float | None]:
    """The latest speculative-decoding line's mean acceptance length and rate (0-1)."""
    if spec is None or spec.is_empty():
        return {}
    row = spec.sort("line_no").row(-1, named=True)
    rate = row.get("draft_accept_pct")
    rate = rate / 100 if rate is not None else row.get("draft_accept_rate")
    return {"spec_accept_len": row.get("mean_accept_len"), "spec_accept_rate": rate}


def _sglang_prefill(prefill: pl.DataFrame | None, latest: pl.DataFrame) -> float | None:
    """SGLang prefills now: the input throughput of each DP group's latest Prefill line printed
    after its latest Decode line (0 when none is); None when the log prints no Prefill line."""
    if prefill is None or prefill.is_empty() or "input_tps" not in prefill.columns:
        return None
    from logparse.analysis._frames import rank_index

    groups = prefill.with_columns(rank_index("DP").fill_null(0).alias("series")).sort("line_no")
    last = groups.group_by("series", maintain_order=True).last()
    after = last.join(latest.select("series", pl.col("line_no").alias("_decode")), on="series", how="left")
    now = after.filter(pl.col("_decode").is_null() | (pl.col("line_no") > pl.col("_decode")))
    return float(now["input_tps"].fill_null(0.0).sum())


def _interval(ranks: pl.DataFrame) -> float | None:
    from logparse.analysis._frames import median_interval

    return median_interval(ranks["time"])


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def number_text(value: float | int | None, digits: int = 0) -> str:
    """A figure with thousands separators, `-` when unknown."""
    return "-" if value is None else f"{value:,.{digits}f}"


def percent_text(value: float | None) -> str:
    """A 0-1 share as a percentage, `-` when unknown."""
    return "-" if value is None else f"{value * 100:.1f} %"


def clock_text(time: dt.datetime | None) -> str:
    """The time of day of a stamp, `--:--:--` when unknown."""
    return "--:--:--" if time is None else time.strftime("%H:%M:%S")


def _iso(time: dt.datetime) -> str:
    aware = time if time.tzinfo else time.replace(tzinfo=dt.UTC)
    return aware.astimezone(dt.UTC).isoformat()


__all__ = ["Status", "Window", "current_numbers"]
