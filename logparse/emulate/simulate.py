"""Step-level scheduler simulation: when every request is prefilled, decoded and finished.

vLLM batches decode and chunked prefill in one step under a token budget (V1 scheduler, V0
with chunked prefill). SGLang runs prefill first whenever prompt tokens are pending, then decode
steps (no mixed chunks). Token counts are fluid (a speculative step emits its mean acceptance
length); everything the log shows is derived from the resulting step list.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from logparse.emulate.noise import Noise
from logparse.emulate.params import PhaseParams, RunParams
from logparse.emulate.spec import per_position

EPS = 1e-9
SCHEDULE_LATENCY_S = 0.02  # request arrival to its first scheduling decision


@dataclass
class Segment:
    """One request's share of one prefill batch (a chunk)."""

    request: int
    step: int
    cached: int  # the request's tokens already in KV before this chunk
    tokens: int
    rate_tps: float  # the simulated speed of this chunk
    new_seq: int = 1  # requests in the batch (filled in when the batch is complete)
    recompute: bool = False


@dataclass
class Request:
    """A request's progress through the engine."""

    index: int
    phase: int
    order: int
    rid: str
    arrival: float
    prompt: int
    output: int
    target: int
    prefilled: int = 0
    ctx: float = 0.0
    generated: float = 0.0
    state: str = "waiting"  # waiting | prefill | decode | done
    scheduled: float | None = None
    first_token: float | None = None
    finish: float | None = None
    preemptions: int = 0
    chunks: list[Segment] = field(default_factory=list)
    group: int = 0  # SGLang DP-attention group the router sent it to


@dataclass
class Step:
    """One engine iteration and the scheduler state around it."""

    index: int
    phase: int
    kind: str  # mixed | prefill | decode
    t0: float
    t1: float
    segments: list[Segment]
    n_decode: int
    prompt_tokens: int
    gen_tokens: float
    accept_len: float | None
    drafts: int
    accepted: float
    accepted_pos: list[float]
    decode_ctr: int  # SGLang forward_ct_decode after this step
    running_at_start: int  # decode batch size when the step was scheduled
    queue_at_start: int  # waiting requests after this batch was admitted
    pending_tokens: int  # prompt tokens still to prefill after this batch
    kv_at_start: int  # KV tokens in use once this batch was admitted
    running: int  # after the step: scheduled, unfinished requests
    waiting: int
    decoding: int
    kv_tokens: int
    kv_blocks: int
    preempted: list[int]
    group: int = 0  # the DP group that ran it (0 without data parallelism)


@dataclass
class PhaseTrace:
    """The simulated course of one phase."""

    index: int
    arrival: float
    run_start: float
    end: float
    requests: list[Request]
    steps: list[int]
    preempted_at: list[float]


@dataclass
class Trace:
    """The whole simulated run after the server became ready."""

    steps: list[Step]
    phases: list[PhaseTrace]
    requests: list[Request]
    end: float


BlockOf = Callable[[str, float, int], int]


@dataclass
class _Plan:
    """A step's admission and timing, decided before its end time is known."""

    reqs: list[Request]
    t: float
    p_idx: int
    index: int
    kind: str
    decoding: list[Request]
    running_at_start: int
    segments: list[Segment]
    ctr: int
    accept: float
    pos: list[float]
    dec_time: float
    queue_at_start: int
    pending_tokens: int
    kv_at_start: int
    victims: list[int]

    def end(self) -> float:
        """When the step would end on its own (decode, then the prefill chunks)."""
        return self.t + self.dec_time + sum(s.tokens / s.rate_tps for s in self.segments)


def dp_groups(phase: PhaseParams, dp: int) -> list[int]:
    """The DP group of each request of `phase`, in arrival order: round-robin, or dealt out
    round-robin over the groups that still have room under `phase.dp_split`."""
    if not phase.dp_split:
        return [i % dp for i in range(phase.concurrency)]
    room = list(phase.dp_split)
    out, g = [], 0
    for _ in range(phase.concurrency):
        while room[g] == 0:
            g = (g + 1) % dp
        out.append(g)
        room[g] -= 1
        g = (g + 1) % dp
    return out


class Simulator:
    """Run the phases of `params` through a vLLM-style or SGLang-style scheduler."""

    def __init__(self, params: RunParams, noise: Noise, block_of: BlockOf, decode_ctr: int = 0) -> None:
        self.params = params
        self.noise = noise
        self.block_of = block_of
        self.mixed = params.engine == "vllm"
        self.k = params.spec_tokens
        self.budget = params.max_num_batched_tokens
        self.steps: list[Step] = []
        self.requests: list[Request] = []
        self.decode_ctr = decode_ctr
        self.waiting: list[Request] = []
        self._accept_cache: dict[tuple[int, int], tuple[float, list[float]]] = {}
        self.dp = params.dp
        self._dp_ctr = [decode_ctr] * params.dp  # each DP group's forward_ct_decode

    def run(self, ready: float) -> Trace:
        """Simulate every phase in turn, starting `gap_s` after `ready` / the previous phase."""
        phases = []
        t_prev = ready
        for p_idx, phase in enumerate(self.params.phases):
            arrival = t_prev + phase.gap_s
            reqs = [self._new_request(p_idx, i, arrival, phase) for i in range(phase.concurrency)]
            self.waiting = list(reqs)
            t = arrival + phase.stall_s + SCHEDULE_LATENCY_S
            if self.dp > 1:
                first_step = len(self.steps)
                end = self._run_phase_dp(reqs, t, p_idx, phase)
                phases.append(
                    PhaseTrace(p_idx, arrival, t, end, reqs, list(range(first_step, len(self.steps))), [])
                )
                t_prev = end
                continue
            pending = sorted(arrival + x for x in phase.preemptions)
            first_step = len(self.steps)
            preempted_at = []
            while any(r.state != "done" for r in reqs):
                victims = []
                while pending and pending[0] <= t:
                    when = pending.pop(0)
                    victim = self._preempt(reqs)
                    if victim is not None:
                        victims.append(victim.index)
                        preempted_at.append(max(when, t))
                step = self._step(reqs, t, p_idx, phase, victims)
                t = step.t1
            end = max(r.finish or t for r in reqs)
            phases.append(
                PhaseTrace(
                    p_idx,
                    arrival,
                    arrival + phase.stall_s + SCHEDULE_LATENCY_S,
                    end,
                    reqs,
                    list(range(first_step, len(self.steps))),
                    preempted_at,
                )
            )
            t_prev = end
        return Trace(self.steps, phases, self.requests, t_prev)

    def _run_phase_dp(self, reqs: list[Request], t: float, p_idx: int, phase: PhaseParams) -> float:
        """DP attention: each group schedules its own requests, but all groups step in lockstep
        (the MoE layers synchronise them), so a step lasts as long as its slowest group's work.
        A group with nothing to do runs an idle batch: no step, no log line, no decode count."""
        groups = dp_groups(phase, self.dp)
        members: list[list[Request]] = [[] for _ in range(self.dp)]
        for req, g in zip(reqs, groups, strict=True):
            req.group = g
            members[g].append(req)
        waiting = [list(m) for m in members]
        while any(r.state != "done" for r in reqs):
            active = [g for g in range(self.dp) if any(r.state != "done" for r in members[g])]
            plans = []
            for pos, g in enumerate(active):
                self.waiting, self.decode_ctr = waiting[g], self._dp_ctr[g]
                plans.append(self._plan(members[g], t, p_idx, phase, [], len(self.steps) + pos))
            t1 = max(plan.end() for plan in plans)
            for g, plan in zip(active, plans, strict=True):
                self.waiting, self.decode_ctr = waiting[g], self._dp_ctr[g]
                step = self._commit(plan, t1)
                step.group = g
                self._dp_ctr[g] = self.decode_ctr
            t = t1
        self.waiting = []
        return max(r.finish or t for r in reqs)

    def _new_request(self, p_idx: int, order: int, arrival: float, phase: PhaseParams) -> Request:
        prefix = "chatcmpl-" if self.mixed else ""
        rid = prefix + self.noise.hex(f"rid|{p_idx}|{order}", 32)
        req = Request(
            len(self.requests), p_idx, order, rid, arrival, phase.input_len, phase.output_len, phase.input_len
        )
        self.requests.append(req)
        return req

    def _preempt(self, reqs: list[Request]) -> Request | None:
        # Both engines evict the most recently scheduled decoding request and recompute it later.
        decoding = [r for r in reqs if r.state == "decode"]
        if not decoding:
            return None
        victim = max(decoding, key=lambda r: (r.scheduled or 0.0, r.order))
        victim.state = "waiting"
        victim.target = victim.prompt + int(victim.generated)
        victim.prefilled = 0
        victim.ctx = 0.0
        victim.preemptions += 1
        self.waiting.insert(0, victim)
        return victim

    def _step(
        self, reqs: list[Request], t: float, p_idx: int, phase: PhaseParams, victims: list[int]
    ) -> Step:
        plan = self._plan(reqs, t, p_idx, phase, victims, len(self.steps))
        return self._commit(plan, plan.end())

    def _plan(
        self, reqs: list[Request], t: float, p_idx: int, phase: PhaseParams, victims: list[int], index: int
    ) -> _Plan:
        decoding = [r for r in reqs if r.state == "decode"]
        running_at_start = len(decoding)
        prefilling = sorted((r for r in reqs if r.state == "prefill"), key=lambda r: r.scheduled or 0.0)
        has_prefill = bool(prefilling or self.waiting)
        if self.mixed:
            budget = self.budget - len(decoding) * (1 + self.k)
            kind = "mixed"
        elif has_prefill:
            budget, decoding, kind = self.budget, [], "prefill"
        else:
            budget, kind = 0, "decode"
        segments = self._admit(prefilling, budget, index, phase, t) if has_prefill else []
        ctr = self.decode_ctr + (1 if decoding else 0)
        block = self.block_of(kind, t, ctr)
        accept, pos = self._accept(p_idx, block, phase)
        dec_time = self._decode_time(decoding, phase, p_idx, block) if decoding else 0.0
        queue_at_start = len(self.waiting)
        pending_tokens = sum(r.target - r.prefilled for r in reqs if r.state in ("waiting", "prefill"))
        kv_at_start = int(sum(r.ctx for r in reqs if r.state in ("prefill", "decode")))
        return _Plan(
            reqs,
            t,
            p_idx,
            index,
            kind,
            decoding,
            running_at_start,
            segments,
            ctr,
            accept,
            pos,
            dec_time,
            queue_at_start,
            pending_tokens,
            kv_at_start,
            victims,
        )

    def _commit(self, plan: _Plan, t1: float) -> Step:
        reqs, t, p_idx, index, kind = plan.reqs, plan.t, plan.p_idx, plan.index, plan.kind
        decoding, segments, ctr, accept, pos = plan.decoding, plan.segments, plan.ctr, plan.accept, plan.pos
        gen, accepted, accepted_pos = 0.0, 0.0, [0.0] * self.k
        for r in decoding:
            inc = min(accept, r.output - r.generated)
            gen += inc
            r.generated += inc
            r.ctx += inc
            if self.k and accept > 1:
                share = max(inc - 1.0, 0.0) / (accept - 1.0)
                accepted += max(inc - 1.0, 0.0)
                accepted_pos = [a + p * share for a, p in zip(accepted_pos, pos, strict=True)]
            if r.generated >= r.output - EPS:
                r.state, r.finish = "done", t1
        for seg in segments:
            r = self.requests[seg.request]
            if r.prefilled == r.target:
                r.state = "decode"
                r.generated += 1
                r.ctx += 1
                gen += 1
                r.first_token = r.first_token if r.first_token is not None else t1
                if r.generated >= r.output - EPS:
                    r.state, r.finish = "done", t1
        if decoding:
            self.decode_ctr = ctr
        active = [r for r in reqs if r.state in ("prefill", "decode")]
        bs = self.params.startup.block_size
        step = Step(
            index=index,
            phase=p_idx,
            kind=kind if (segments or kind != "mixed") else "decode",
            t0=t,
            t1=t1,
            segments=segments,
            n_decode=len(decoding),
            prompt_tokens=sum(s.tokens for s in segments),
            gen_tokens=gen,
            accept_len=accept if self.k and decoding else None,
            drafts=len(decoding) if self.k else 0,
            accepted=accepted,
            accepted_pos=accepted_pos,
            decode_ctr=self.decode_ctr,
            running_at_start=plan.running_at_start,
            queue_at_start=plan.queue_at_start,
            pending_tokens=plan.pending_tokens,
            kv_at_start=plan.kv_at_start,
            running=len(active),
            waiting=len(self.waiting),
            decoding=sum(1 for r in reqs if r.state == "decode"),
            kv_tokens=int(sum(r.ctx for r in active)),
            kv_blocks=sum(math.ceil(r.ctx / bs) for r in active),
            preempted=plan.victims,
        )
        self.steps.append(step)
        return step

    def _admit(
        self, prefilling: list[Request], budget: int, index: int, phase: PhaseParams, t: float
    ) -> list[Segment]:
        segments: list[Segment] = []
        candidates = prefilling + list(self.waiting)
        for r in candidates:
            if budget <= 0:
                break
            n = min(r.target - r.prefilled, budget)
            if r.state == "waiting":
                self.waiting.remove(r)
                r.state = "prefill"
                r.scheduled = t if r.scheduled is None or r.preemptions else r.scheduled
            seg = Segment(
                r.index, index, r.prefilled, n, self._prefill_rate(r, n, phase), recompute=r.preemptions > 0
            )
            r.prefilled += n
            r.ctx += n
            r.chunks.append(seg)
            segments.append(seg)
            budget -= n
        for seg in segments:
            seg.new_seq = len(segments)
        return segments

    def _prefill_rate(self, r: Request, n: int, phase: PhaseParams) -> float:
        chunk = len(r.chunks)
        if r.order == 0 and not r.preemptions and chunk < len(phase.prefill_chunk_tps):
            return phase.prefill_chunk_tps[chunk]
        mid = r.prefilled + n / 2
        base = phase.prefill_tps / (1 + phase.prefill_ctx_slowdown * mid / 1e5)
        return base * self.noise.factor(f"p|{r.phase}|{r.order}|{chunk}|{r.preemptions}", phase.prefill_noise)

    def _decode_time(self, decoding: list[Request], phase: PhaseParams, p_idx: int, block: int) -> float:
        ctx = sum(r.ctx for r in decoding) / len(decoding)
        steps_per_s = phase.decode_tps / (1 + phase.decode_ctx_slowdown * ctx / 1e5)
        return 1.0 / (steps_per_s * self.noise.factor(f"d|{p_idx}|{block}", phase.noise))

    def _accept(self, p_idx: int, block: int, phase: PhaseParams) -> tuple[float, list[float]]:
        if not self.k or phase.spec_accept_len is None:
            return 1.0, []
        cached = self._accept_cache.get((p_idx, block))
        if cached is None:
            extra = (phase.spec_accept_len - 1.0) * self.noise.factor(f"a|{p_idx}|{block}", phase.spec_jitter)
            extra = min(max(extra, 0.0), float(self.k))
            cached = (1.0 + extra, per_position(extra, self.k))
            self._accept_cache[(p_idx, block)] = cached
        return cached
