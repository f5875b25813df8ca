"""Build the records of a vLLM run: start-up, periodic stats, spec metrics and events."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from logparse.emulate import vllm_lines as L
from logparse.emulate.eras import VllmEra
from logparse.emulate.events import JIT_OPS, Sink, access_lines, autotuner_oom, spread
from logparse.emulate.noise import Noise
from logparse.emulate.params import RunParams
from logparse.emulate.render import Record
from logparse.emulate.simulate import Simulator, Step, Trace
from logparse.emulate.vllm_format import VllmFormatter
from logparse.emulate.vllm_startup import VllmStartup


@dataclass
class Sample:
    """One periodic stats log of the front end, with the values it printed."""

    t: float
    t_prev: float
    phase: int | None
    printed: bool
    values: dict[str, Any]
    stats: Record | None = None
    spec: Record | None = None
    spec_values: dict[str, Any] | None = None
    engine: int = 0  # the DP engine (`Engine %03d`) the line is about
    pending: tuple[Any, ...] = ()  # DP: the `_stats_records` arguments, written tick by tick
    aggregated: int = 0  # N of an `N Engines Aggregated:` line (0: one engine's line)


@dataclass
class VllmBuild:
    """Records plus what the truth needs from a vLLM build."""

    records: list[Record]
    trace: Trace
    ready: float
    ready_record: Record
    startup: dict[str, Any]
    samples: list[Sample] = field(default_factory=list)


class VllmBuilder:
    """Lay out a vLLM run on a time axis (seconds after the first line)."""

    def __init__(self, params: RunParams, era: VllmEra, noise: Noise) -> None:
        self.params = params
        self.era = era
        self.noise = noise
        self.sink = Sink()
        self.ranks = list(range(params.tp))
        self.interval = params.stats_interval_s or era.stats_interval_s
        self.format = VllmFormatter(params, era, noise)

    def build(self) -> VllmBuild:
        """Start-up, then the simulated phases, then the stats sampling and events."""
        ready, ready_record, startup = VllmStartup(
            self.params, self.era, self.noise, self.sink, self.format.pid
        ).run()
        tick0 = ready + 0.37
        sim = Simulator(self.params, self.noise, lambda kind, t, ctr: math.floor((t - tick0) / self.interval))
        trace = sim.run(ready)
        samples = self._sample(trace, tick0)
        self._phase_events(trace)
        access_lines(self.sink, self.params, trace, "api", self.noise, ready)
        return VllmBuild(self.sink.records, trace, ready, ready_record, startup, samples)

    def _log(
        self, t: float, source: str, key: str, body: str, level: str = "INFO", tag: str = "stats", **meta: Any
    ) -> Record:
        return self.sink.add(
            t, body, source=source, level=level, site=L.site(self.era, key), tag=tag, meta=meta
        )

    def _sample(self, trace: Trace, tick0: float) -> list[Sample]:
        times = self._log_times(trace, tick0)
        if self.params.dp == 1:
            samples = self._sample_engine(trace, trace.steps, times, tick0, 0)
        else:
            # The API server logs every engine at each tick, in engine order (StatLoggerManager.log
            # walks per_engine_logger_dict: engine d's stats line, then its SpecDecoding line).
            per_engine = [
                self._sample_engine(trace, [s for s in trace.steps if s.group == d], times, tick0, d)
                for d in range(self.params.dp)
            ]
            if self.params.aggregate_engine_logging:
                samples = self._aggregate(trace, per_engine)
            else:
                samples = [sample for tick in zip(*per_engine, strict=True) for sample in tick]
            for sample in samples:
                if sample.printed:
                    self._stats_records(sample, *sample.pending)
        self._preemption_warnings(trace)
        return samples

    def _sample_engine(
        self, trace: Trace, steps: list[Step], times: list[float], tick0: float, engine: int
    ) -> list[Sample]:
        """The stats samples of one engine (its own steps, its own idle suppression). With DP the
        records are written afterwards, tick by tick in engine order (`Sample.pending`)."""
        startup = self.params.startup
        samples: list[Sample] = []
        i = 0
        last = tick0
        prev_active = False
        cum = {"accepted": 0.0, "drafts": 0, "emitted": 0.0}
        state: Step | None = None
        for tau in times:
            window: list[Step] = []
            while i < len(steps) and steps[i].t1 <= tau + 1e-12:
                window.append(steps[i])
                i += 1
            if window:
                state = window[-1]
            prompt = sum(s.prompt_tokens for s in window)
            gen = sum(s.gen_tokens for s in window)
            drafts = sum(s.drafts for s in window)
            accepted = sum(s.accepted for s in window)
            preempted = sum(len(s.preempted) for s in window)
            running = state.running if state else 0
            waiting = state.waiting if state else 0
            kv_tokens = state.kv_tokens if state else 0
            kv_blocks = state.kv_blocks if state else 0
            active = (prompt + gen) > 0 or (self.era.idle_flag and running + waiting > 0)
            printed = active or prev_active
            prev_active = active
            phase = window[-1].phase if window else self._phase_at(trace, tau)
            elapsed = tau - last
            values = {
                "prompt_tps": prompt / elapsed,
                "gen_tps": gen / elapsed,
                "running": running,
                "waiting": waiting,
                "preemptions": preempted,
                "kv_pct": 100.0 * kv_blocks * startup.block_size / startup.kv_pool_tokens,
                "kv_tokens": kv_tokens,
            }
            sample = Sample(tau, last, phase, printed, values, engine=engine)
            cum["accepted"] += accepted
            cum["drafts"] += drafts
            cum["emitted"] += accepted + drafts
            if printed and self.params.dp == 1:
                self._stats_records(sample, window, drafts, accepted, elapsed, cum)
            elif self.params.dp > 1:
                sample.pending = (window, drafts, accepted, elapsed, dict(cum))
            samples.append(sample)
            last = tau
        return samples

    def _aggregate(self, trace: Trace, per_engine: list[list[Sample]]) -> list[Sample]:
        """`--aggregate-engine-logging`: one sample per tick for all engines together (vLLM's
        AggregatedLoggingStatLogger records every engine into one logger and logs once), with the
        logger's own idle suppression over the combined figures."""
        samples: list[Sample] = []
        prev_active = False
        for tick in zip(*per_engine, strict=True):
            values = aggregate_values([s.values for s in tick])
            active = (values["prompt_tps"] + values["gen_tps"]) > 0 or (
                self.era.idle_flag and values["running"] + values["waiting"] > 0
            )
            window = [step for s in tick for step in s.pending[0]]
            latest = max(window, key=lambda step: step.t1) if window else None
            phase = latest.phase if latest else self._phase_at(trace, tick[0].t)
            cum = {key: sum(s.pending[4][key] for s in tick) for key in tick[0].pending[4]}
            pending = (
                window,
                sum(s.pending[1] for s in tick),
                sum(s.pending[2] for s in tick),
                tick[0].pending[3],
                cum,
            )
            samples.append(
                Sample(
                    tick[0].t,
                    tick[0].t_prev,
                    phase,
                    active or prev_active,
                    values,
                    pending=pending,
                    aggregated=len(tick),
                )
            )
            prev_active = active
        return samples

    def _log_times(self, trace: Trace, tick0: float) -> list[float]:
        end = trace.end + self.params.tail_idle_s
        ticks = []
        k = 1
        while tick0 + k * self.interval <= end:
            ticks.append(tick0 + k * self.interval)
            k += 1
        if self.era.v1:
            return ticks
        # V0 logs from the engine step once 5 s have passed; the server's 10 s poll covers idle time
        polls = [tick0 + 10.0 * k for k in range(1, int((end - tick0) / 10.0) + 1)]
        candidates = sorted([s.t1 for s in trace.steps] + polls)
        times, last = [], tick0
        for t in candidates:
            if t - last >= self.interval:
                times.append(t)
                last = t
        return times

    def _phase_at(self, trace: Trace, t: float) -> int | None:
        for phase in trace.phases:
            if phase.arrival <= t <= phase.end:
                return phase.index
        return None

    def _stats_records(
        self,
        sample: Sample,
        window: list[Step],
        drafts: int,
        accepted: float,
        elapsed: float,
        cum: dict[str, float],
    ) -> None:
        v, era, p = sample.values, self.era, self.params
        if era.v1:
            hit = 0.0 if p.enable_prefix_caching or era.prefix_mode == "wrap" else None
            body = L.stats_v1(
                era,
                sample.engine,
                v["prompt_tps"],
                v["gen_tps"],
                v["running"],
                v["waiting"],
                v["preemptions"],
                v["kv_pct"],
                hit,
                aggregated=sample.aggregated,
            )
        else:
            body = L.stats_v0(v["prompt_tps"], v["gen_tps"], v["running"], 0, v["waiting"], v["kv_pct"], 0.0)
        sample.stats = self._log(sample.t, "api", "stats", body, tag="stats", phase=sample.phase)
        if not era.v1 and p.enable_prefix_caching:
            self._log(sample.t, "api", "prefix", L.prefix_cache_v0(0.0, 0.0), tag="prefix_cache")
        k = p.spec_tokens
        if not k:
            return
        if era.v1 and drafts:
            pos = [sum(s.accepted_pos[j] for s in window) / drafts for j in range(k)]
            acc = round(accepted)
            mean_len, accepted_tps, drafted_tps = 1 + acc / drafts, acc / elapsed, drafts * k / elapsed
            rate_pct = 100.0 * acc / (drafts * k)
            sample.spec = self._log(
                sample.t,
                "api",
                "spec",
                L.spec_v1(mean_len, accepted_tps, drafted_tps, acc, drafts * k, pos, rate_pct),
                tag="spec",
                phase=sample.phase,
            )
            sample.spec_values = {
                "mean_accept_len": mean_len,
                "accepted_tps": accepted_tps,
                "drafted_tps": drafted_tps,
                "accepted": acc,
                "drafted": drafts * k,
                "per_position": pos,
                "accept_rate_pct": rate_pct,
            }
        elif not era.v1 and cum["drafts"]:
            draft_tokens = int(cum["drafts"]) * k
            acc = round(cum["accepted"])
            emitted = round(cum["emitted"])
            rate, efficiency = acc / draft_tokens, emitted / (cum["drafts"] * (k + 1))
            sample.spec = self._log(
                sample.t,
                "api",
                "spec",
                L.spec_v0(rate, efficiency, k, acc, draft_tokens, emitted),
                tag="spec",
                phase=sample.phase,
            )
            sample.spec_values = {
                "accept_rate": rate,
                "efficiency": efficiency,
                "accepted": acc,
                "drafted": draft_tokens,
                "emitted": emitted,
            }

    def _preemption_warnings(self, trace: Trace) -> None:
        if self.era.v1:
            return
        total = 0
        for step in trace.steps:
            for index in step.preempted:
                total += 1
                if total % 50 == 1:
                    rid = trace.requests[index].rid
                    self._log(
                        step.t0,
                        "core",
                        "preempt",
                        L.preempted_v0(rid, total),
                        level="WARNING",
                        tag="preemption",
                        phase=step.phase,
                    )

    def _phase_events(self, trace: Trace) -> None:
        sources = [f"w{r}" for r in self.ranks]
        for phase, trace_phase in zip(self.params.phases, trace.phases, strict=True):
            t0, t1 = trace_phase.arrival + 0.05, trace_phase.run_start
            autotuner_oom(
                self.sink,
                t0,
                max(t1, t0 + 1.0),
                phase.oom_retries,
                sources,
                self.params.style.glue_tqdm,
                trace_phase.index,
            )
            for i, t in enumerate(spread(t0, max(t1, t0 + 1.0), phase.jit_compiles)):
                op = JIT_OPS[(i + trace_phase.index) % len(JIT_OPS)]
                self.sink.add(
                    t,
                    f"Loading JIT ops: {op}",
                    source="w0",
                    style="flashinfer",
                    site="core.py:89",
                    tag="jit",
                    meta={"phase": trace_phase.index},
                )


def aggregate_values(values: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of an `N Engines Aggregated:` line from the engines' figures of one interval:
    throughputs (every engine's tokens over the same interval), Running, Waiting, preemptions
    and KV tokens summed."""
    out = {
        key: sum(v[key] for v in values)
        for key in ("prompt_tps", "gen_tps", "running", "waiting", "preemptions", "kv_tokens")
    }
    # vllm-log-formats.md does not say how KV cache usage combines. vLLM's
    # AggregatedLoggingStatLogger.aggregate_scheduler_stats divides the summed usage by the number
    # of engines, idle ones included (their last usage), so: the mean over every DP engine.
    out["kv_pct"] = statistics.fmean(v["kv_pct"] for v in values)
    return out
