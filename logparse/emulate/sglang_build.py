"""Build the records of an SGLang run: start-up per rank, Prefill/Decode lines, events."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from logparse.emulate import sglang_lines as L
from logparse.emulate.eras import SglangEra
from logparse.emulate.events import Sink, access_lines, autotuner_oom, spread
from logparse.emulate.noise import Noise
from logparse.emulate.params import RunParams
from logparse.emulate.render import (
    Record,
    flashinfer_line,
    sglang_ts,
    tqdm_segment,
    uvicorn_access,
    uvicorn_info,
)
from logparse.emulate.simulate import Simulator, Step, Trace

WARMUP_TOKENS = 7
WARMUP_DECODE_STEPS = 7


class PrefillValues(TypedDict):
    """What a Prefill line prints (`sglang_lines.prefill_batch` arguments)."""

    new_seq: int
    new_token: int
    cached: int
    usage: float
    running: int
    queue: int
    pending: int
    input_tps: float


class DecodeValues(TypedDict):
    """What a Decode line prints (`sglang_lines.decode_batch` arguments)."""

    running: int
    tokens: int
    usage: float
    accept_len: float | None
    accept_rate: float | None
    gen_tps: float
    queue: int


@dataclass
class SglangBuild:
    """Records plus what the truth needs from an SGLang build."""

    records: list[Record]
    trace: Trace
    ready: float
    ready_record: Record
    startup: dict[str, Any]
    prefills: list[tuple[Step, Record, PrefillValues]] = field(default_factory=list)
    decodes: list[tuple[Step, Record, DecodeValues]] = field(default_factory=list)


class SglangBuilder:
    """Lay out an SGLang run on a time axis (seconds after the first line)."""

    def __init__(self, params: RunParams, era: SglangEra, noise: Noise) -> None:
        self.params = params
        self.era = era
        self.noise = noise
        self.sink = Sink()
        self.ranks = list(range(params.tp))
        self.attn_tp = params.tp // params.dp if params.tp % params.dp == 0 else params.tp
        self.pool = params.startup.kv_pool_tokens

    def _rank_share(self, tokens: float) -> int:
        """The KV tokens one rank holds of `tokens` of context: with decode context parallelism
        each of the `dcp_size` ranks keeps its share, and its Decode line counts that share."""
        return -(-int(tokens) // self.params.dcp_size)

    def build(self) -> SglangBuild:
        """Start-up, then the simulated phases rendered as Prefill/Decode lines."""
        ready, ready_record, startup, t_sched = self._startup()
        interval = self.params.decode_log_interval
        sim = Simulator(
            self.params,
            self.noise,
            lambda kind, t, ctr: (ctr - 1) // interval,
            decode_ctr=WARMUP_DECODE_STEPS,
        )
        trace = sim.run(ready)
        build = SglangBuild(self.sink.records, trace, ready, ready_record, startup)
        self._serving(trace, t_sched, build)
        self._phase_events(trace)
        access_lines(self.sink, self.params, trace, "main", self.noise, ready)
        return build

    # -- start-up -------------------------------------------------------------------------------

    def _log(self, t: float, source: str, body: str, tag: str = "startup", **meta: Any) -> Record:
        return self.sink.add(t, body, source=source, tag=tag, meta=meta)

    def _jit(self, key: str, scale: float) -> float:
        return 1.0 + scale * abs(self.noise.z(key))

    def _startup(self) -> tuple[float, Record, dict[str, Any], float]:
        p, s, era = self.params, self.params.startup, self.era
        total = s.total_gpu_gib
        if "slow_tokenizer" in p.warnings:
            self.sink.add(
                1.2,
                "/usr/local/lib/python3.12/dist-packages/sglang/srt/tokenizer.py:203: "
                "UserWarning: " + L.SLOW_TOKENIZER,
                source="raw",
                style="raw",
                tag="warning",
            )
            self.sink.add(1.2, "  warnings.warn(", source="raw", style="raw", tag="warning_cont")
        t_load = s.pre_load_s
        for r in self.ranks:
            self._log(2.0 + 0.01 * r, f"tp{r}", L.dist_begin())
            self._log(t_load - 0.6 + 0.01 * r, f"tp{r}", L.dist_end(era, t_load - 2.6, 0.41))
            self._log(t_load + 0.01 * r, f"tp{r}", L.load_begin(total - 0.66))
        self._bar(t_load, s.weight_load_s, s.shards)
        load_end = []
        for r in self.ranks:
            took = s.weight_load_s * (self._jit(f"load|{r}", 0.003) if r else 1.0)
            self._log(
                t_load + took,
                f"tp{r}",
                L.load_end(era, took, s.model_class, s.quant, total - 0.66 - s.weights_gib, s.weights_gib),
                tag="weights",
                rank=r,
            )
            load_end.append(t_load + took)
        t = max(load_end) + 0.5
        avail = total - 0.66 - s.weights_gib
        if s.draft_model:
            for r in self.ranks:
                self._log(t + 0.01 * r, f"tp{r}", L.load_begin(avail))
                self._log(
                    t + s.draft_load_s + 0.01 * r,
                    f"tp{r}",
                    L.load_end(
                        era,
                        s.draft_load_s,
                        s.draft_model_class or "LlamaForCausalLMEagle3",
                        None,
                        avail - s.draft_weights_gib,
                        s.draft_weights_gib,
                    ),
                )
            t += s.draft_load_s + 0.5
        ready = load_end[0] + s.init_s
        t_capture = self._pools(t + 2.0)
        graph_s, t_sched = self._capture(t_capture, s.cuda_graph_s)
        self._log(
            t_sched + 0.2,
            "tp0",
            L.capacity(
                s.kv_pool_tokens, p.max_num_batched_tokens, p.max_num_seqs, s.max_model_len, self._remaining()
            ),
            tag="kv",
        )
        color = p.style.color
        server_pid = 100 + self.noise.integer("pid|main", 0, 900)
        uvicorn = (
            f"Started server process [{server_pid}]",
            "Waiting for application startup.",
            "Application startup complete.",
            "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        )
        for i, text in enumerate(uvicorn):
            self.sink.add(
                t_sched + 1.0 + 0.01 * i,
                uvicorn_info(text, color),
                source="main",
                style="uvicorn",
                tag="startup",
            )
        # The warm-up request: one per DP group under DP attention, each group printing its own line.
        for g in self._dp_order(range(self.params.dp), "warmup"):
            warm = self._log(
                ready - 0.9, self._group_source(g), self._warmup_prefill(ready - 0.9 - t_sched), tag="warmup"
            )
            warm.meta["warmup"] = True
        port = self.noise.integer("warm", 40000, 60000)
        self.sink.add(
            ready - 0.05,
            f"127.0.0.1:{port}|POST|/generate|200 OK",
            source="main",
            style="uvicorn_access",
            tag="access_warmup",
        )
        ready_record = self._log(ready, "main", L.READY, tag="ready")
        startup = {
            "weights_gib": s.weights_gib,
            "weight_load_s": s.weight_load_s,
            "kv_pool_tokens": s.kv_pool_tokens,
            "kv_gib": s.kv_gib,
            "max_running_requests": p.max_num_seqs,
            "max_concurrency": None,
            "max_model_len": s.max_model_len,
            "cuda_graph_s": graph_s,
            "cuda_graph_sizes": s.cuda_graph_sizes,
            "compile_s": None,
            "init_s": s.init_s,
            "ready_s": round(ready, 3),
            "draft_kv_gib": s.draft_kv_gib,
            "mamba_gib": s.mamba_gib,
            "remaining_gib": self._remaining(),
            "oom_retries": s.oom_retries,
        }
        return ready, ready_record, startup, t_sched

    def _remaining(self) -> float:
        s = self.params.startup
        if s.remaining_gib is not None:
            return s.remaining_gib
        used = s.weights_gib + s.draft_weights_gib + s.kv_gib + s.draft_kv_gib + s.mamba_gib
        return s.total_gpu_gib - 0.66 - used

    def _bar(self, t0: float, seconds: float, shards: int) -> None:
        desc = "Loading safetensors checkpoint shards"
        bar = "".join(
            "\r" + tqdm_segment(desc, n, shards, seconds * n / shards, False) for n in range(shards + 1)
        )
        self.sink.add(t0 + seconds, bar, source="raw", style="raw", tag="progress")

    def _pools(self, t: float) -> float:
        p, s, era = self.params, self.params.startup, self.era
        dtype = "torch.float8_e4m3fn" if "fp8_kv_scale" in p.warnings else "torch.bfloat16"
        for r in self.ranks:
            src = f"tp{r}"
            if "fp8_kv_scale" in p.warnings:
                self._log(t, src, L.FP8_KV, tag="warning")
            mla = s.kv_layout == "mla"
            for body in L.kv_allocated(era, s.kv_pool_tokens, s.kv_gib, dtype, mla):
                self._log(t + 0.1, src, body, tag="kv", rank=r)
            if s.draft_model and s.draft_kv_gib:
                for body in L.kv_allocated(era, s.kv_pool_tokens, s.draft_kv_gib, dtype, mla):
                    self._log(t + 0.2, src, body, tag="kv_draft")
            if p.hybrid_ssm:
                spec = p.spec_tokens > 0
                conv, ssm = 0.04 * s.mamba_gib, (0.78 if spec else 0.96) * s.mamba_gib
                inter = (0.17 * s.mamba_gib, 0.01 * s.mamba_gib) if spec else (None, None)
                self._log(t + 0.3, src, L.mamba_allocated(s.mamba_slots, conv, ssm, *inter), tag="mamba")
            self._log(t + 0.4, src, L.pool_end(self._remaining()), tag="memory")
        if era.reduced_running_line and s.requested_running and s.requested_running > p.max_num_seqs:
            self._log(t + 0.5, "tp0", L.reduced_running(s.requested_running, p.max_num_seqs), tag="kv")
        return t + 1.0

    def _capture(self, t0: float, seconds: float) -> tuple[float, float]:
        p, s, era = self.params, self.params.startup, self.era
        bs = _capture_sizes(s.cuda_graph_sizes)
        k = p.spec_tokens
        roles = [("target", 0.7 * seconds if k else seconds, k + 1 if k else 1)]
        if k and s.draft_model:
            roles.append(("draft", 0.3 * seconds, 1))
        avail = self._remaining()
        t = t0
        printed = 0.0
        for role, took, per_bs in roles:
            for r in self.ranks:
                self._log(
                    t + 0.01 * r, f"tp{r}", L.capture_begin(era, role, avail, bs, per_bs), tag="cuda_graph"
                )
            if era.capture == "legacy" and role == "target":
                self._log(t + 0.02, "tp0", L.capture_bs(bs), tag="cuda_graph")
            self._capture_bar(t, took, bs, avail)
            for r in self.ranks:
                elapsed = took * (self._jit(f"graph|{role}|{r}", 0.01) if r else 1.0)
                usage = s.cuda_graph_gib * (0.7 if role == "target" else 0.3)
                self._log(
                    t + elapsed + 0.01 * r,
                    f"tp{r}",
                    L.capture_end(era, role, elapsed, usage, avail - usage, per_bs),
                    tag="cuda_graph",
                )
                if r == 0:
                    printed += float("%.2f" % elapsed)
            avail -= s.cuda_graph_gib * (0.7 if role == "target" else 0.3)
            t += took * 1.02 + 0.3
        return round(printed, 2), t

    def _capture_bar(self, t0: float, seconds: float, bs: list[int], avail: float) -> None:
        n = len(bs)
        segments = []
        for i in range(n + 1):
            current = bs[max(0, n - 1 - i)]
            desc = (
                f"Capturing batches (bs={current} avail_mem={avail:.2f} GB)"
                if self.era.capture_bar_bs
                else f"Capturing batches (avail_mem={avail:.2f} GB)"
            )
            segments.append("\r" + tqdm_segment(desc, i, n, seconds * i / n, True))
        self.sink.add(t0 + seconds, "".join(segments), source="raw", style="raw", tag="progress")

    def _warmup_prefill(self, gap: float) -> str:
        return L.prefill_batch(
            self.era,
            new_seq=1,
            new_token=WARMUP_TOKENS,
            cached=0,
            usage=0.0,
            running=0,
            queue=0,
            pending=0,
            input_tps=WARMUP_TOKENS / max(gap, 1e-3),
            hybrid=self.params.hybrid_ssm,
            mamba_usage=0.0,
        )

    # -- serving --------------------------------------------------------------------------------

    def _group_source(self, group: int) -> str:
        """The stats-printing rank of a DP group (`attn_tp_rank == 0`, sglang-log-formats §1.2)."""
        return f"tp{group * self.attn_tp}"

    def _dp_order(self, groups: Iterable[int], key: str) -> list[int]:
        """The order in which the DP groups' lines of one instant reach the log (their schedulers
        are separate processes: not group order, unless `dp_interleave` is 0)."""
        groups = list(groups)
        salt = self.params.dp_interleave
        if self.params.dp == 1 or not salt:
            return groups
        return sorted(groups, key=lambda g: self.noise.uniform(f"dp_order|{salt}|{key}|{g}", 0.0, 1.0))

    def _lockstep(self, steps: list[Step]) -> list[Step]:
        """`steps` with each lockstep batch (the DP groups' steps of one instant) in print order."""
        if self.params.dp == 1:
            return steps
        out: list[Step] = []
        i = 0
        while i < len(steps):
            j = i
            while j < len(steps) and steps[j].t0 == steps[i].t0:
                j += 1
            by_group = {s.group: s for s in steps[i:j]}
            out += [by_group[g] for g in self._dp_order(by_group, f"{steps[i].index}")]
            i = j
        return out

    def _serving(self, trace: Trace, t_sched: float, build: SglangBuild) -> None:
        p, era = self.params, self.era
        k = p.spec_tokens
        slots = max(p.startup.mamba_slots, 1)
        dp = range(p.dp)
        last_prefill = {g: build.ready - 0.9 for g in dp}
        last_decode = {g: t_sched for g in dp}
        tokens_since = {g: float(WARMUP_DECODE_STEPS) for g in dp}
        drafts_since = {g: 0 for g in dp}
        accepted_since = {g: 0.0 for g in dp}
        for step in self._lockstep(trace.steps):
            g, src = step.group, self._group_source(step.group)
            if step.preempted:
                before = self.noise.uniform(f"ratio|{step.index}", 0.25, 0.5)
                after = min(1.0, before + 0.1 * len(step.preempted))
                gained = sum(trace.requests[i].target for i in step.preempted)
                self._log(
                    step.t0 - 1e-4,
                    "tp0",
                    L.retract(era, len(step.preempted), gained, p.hybrid_ssm, before, after),
                    tag="retraction",
                    phase=step.phase,
                    count=len(step.preempted),
                )
            if step.kind == "prefill":
                gap = step.t0 - last_prefill[g]
                cached = sum(seg.cached for seg in step.segments) if p.cached_counts_chunks else 0
                prefill: PrefillValues = {
                    "new_seq": len(step.segments),
                    "new_token": step.prompt_tokens,
                    "cached": cached,
                    "usage": self._rank_share(step.kv_at_start) / self.pool,
                    "running": step.running_at_start,
                    "queue": step.queue_at_start,
                    "pending": step.pending_tokens,
                    "input_tps": step.prompt_tokens / gap if gap > 0 else 0.0,
                }
                mamba = (step.running_at_start + len(step.segments)) / slots
                body = L.prefill_batch(era, hybrid=p.hybrid_ssm, mamba_usage=mamba, **prefill)
                record = self._log(step.t0, src, body, tag="prefill", phase=step.phase, group=g)
                build.prefills.append((step, record, prefill))
                last_prefill[g] = step.t0
            elif step.kind == "decode":
                tokens_since[g] += step.gen_tokens
                drafts_since[g] += step.drafts
                accepted_since[g] += step.accepted
                if step.decode_ctr % p.decode_log_interval:
                    continue
                accept = 1 + accepted_since[g] / drafts_since[g] if k and drafts_since[g] else None
                tokens = self._rank_share(step.kv_tokens)
                decode: DecodeValues = {
                    "running": step.n_decode,
                    "tokens": tokens,
                    "usage": tokens / self.pool,
                    "accept_len": accept,
                    "accept_rate": L.accept_rate(era, accept, k) if accept is not None else None,
                    "gen_tps": tokens_since[g] / (step.t1 - last_decode[g]),
                    "queue": step.waiting,
                }
                body = L.decode_batch(
                    era,
                    hybrid=p.hybrid_ssm,
                    mamba_num=step.n_decode,
                    mamba_usage=step.n_decode / slots,
                    **decode,
                )
                record = self._log(step.t1, src, body, tag="decode", phase=step.phase, group=g)
                build.decodes.append((step, record, decode))
                last_decode[g], tokens_since[g], drafts_since[g], accepted_since[g] = step.t1, 0.0, 0, 0.0

    def _phase_events(self, trace: Trace) -> None:
        for phase, trace_phase in zip(self.params.phases, trace.phases, strict=True):
            t0, t1 = trace_phase.arrival + 0.05, max(trace_phase.run_start, trace_phase.arrival + 1.0)
            autotuner_oom(
                self.sink,
                t0,
                t1,
                phase.oom_retries,
                ["raw"] * len(self.ranks),
                self.params.style.glue_tqdm,
                trace_phase.index,
            )
            for i, t in enumerate(spread(t0, t1, phase.jit_compiles)):
                self._log(t, "tp0", L.deepgemm_jit(7168 + 512 * i, 2048), tag="jit", phase=trace_phase.index)

    # -- formatting -------------------------------------------------------------------------------

    def format(self, record: Record, when: datetime) -> list[str]:
        """Physical lines of one record: `[ts RANKS] msg`, uvicorn's `[ts] INFO:`, or foreign text."""
        color = self.params.style.color
        stamp = sglang_ts(when)
        if record.style == "engine":
            record.ts = stamp
            ranks = ""
            if record.source.startswith("tp") and self.params.dp > 1:
                rank = int(record.source[2:])
                ranks = f" DP{rank // self.attn_tp} TP{rank}" + (
                    f" EP{rank}" if self.params.ep_size > 1 else ""
                )
            elif record.source.startswith("tp") and self.params.tp > 1:
                ranks = f" TP{record.source[2:]}" + (
                    f" EP{record.source[2:]}" if self.params.ep_size > 1 else ""
                )
            return [f"[{stamp}{ranks}] {record.body}"]
        if record.style == "uvicorn":
            record.ts = stamp
            return [f"[{stamp}] {record.body}"]
        if record.style == "uvicorn_access":
            record.ts = stamp
            client, method, path, status = record.body.split("|")
            return [f"[{stamp}] {uvicorn_access(client, method, path, status, color)}"]
        if record.style == "flashinfer":
            glued = record.meta.get("glued", "")
            text = flashinfer_line(when, record.level, record.site, record.body)
            record.ts = text[:23]
            return [glued + text if glued else text]
        return [record.body]


def _capture_sizes(n: int) -> list[int]:
    sizes = [1, 2, 4]
    step = 8
    while len(sizes) < n:
        sizes.append(sizes[-1] + step if sizes[-1] >= 8 else 8)
        if sizes[-1] >= 256:
            step = 16
    return sizes[:n]
