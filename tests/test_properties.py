"""Properties of parsing that must hold for any input (hypothesis)."""
from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import logparse
from logparse.engine import compiled
from logparse.grammar import load_grammar
from logparse.ingest.reader import iter_lines

from conftest import REAL_LOGS

GRAMMAR = load_grammar()
CORES = {name: compiled(GRAMMAR, name) for name in GRAMMAR.engines}
# Kinds only one engine prints: the other engine's grammar must never produce them.
ENGINE_ONLY_KINDS = {
    "vllm": {"engine_stats", "prefix_cache", "spec_decode"},
    "sglang": {"prefill_batch", "decode_batch"},
}


def parse(engine: str, line: str) -> dict[str, Any]:
    """The core's event of one line."""
    return CORES[engine].parse_lines([line])[0]


def _real_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(REAL_LOGS.glob("*/*.log")):
        lines.extend(path.read_text(encoding="utf-8", errors="replace").split("\n")[:40])
    return lines or ["INFO 01-01 00:00:00 [x.py:1] hello"]


REAL = _real_lines()
hostile_text = st.lists(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
        ["\r", "\x1b[0;36m", "\x1b[0m", "\x00", "(EngineCore pid=1) ", "[2025-01-01 00:00:00 TP0] ", "%", ","]),
    max_size=8,
).map("".join)


def lines_of(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def ingested_rows(engine: str, data: bytes, tmp: Path) -> list[int]:
    """The line numbers of every row `logparse.ingest` gives for `data`, in order."""
    path = tmp / "log.txt"
    path.write_bytes(data)
    tables = logparse.ingest(path, engine=engine).tables
    return sorted(n for frame in tables.values() for n in frame["line_no"].to_list())


@pytest.mark.parametrize("engine", sorted(CORES))
@settings(max_examples=40, deadline=None)
@given(lines=st.lists(st.sampled_from(REAL) | hostile_text, max_size=30))
def test_one_event_per_line_whatever_the_input(
    engine: str, lines: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    data = "\n".join(lines).encode("utf-8", errors="surrogatepass")
    expected = lines_of(data)
    assert ingested_rows(engine, data, tmp_path_factory.mktemp("log")) == list(range(1, expected + 1))
    texts = [text for _, text in iter_lines(io.BytesIO(data))]
    events = CORES[engine].parse_lines(texts)
    assert len(events) == expected
    for event in events:
        if event["kind"] == "unparsed":
            assert isinstance(event["raw"], str)


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=2000))
def test_binary_junk_never_raises(data: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    for engine in CORES:
        assert ingested_rows(engine, data, tmp_path_factory.mktemp("log")) == list(range(1, lines_of(data) + 1))


class Chunks(io.RawIOBase):
    def __init__(self, data: bytes, cuts: list[int]) -> None:
        self.parts = []
        last = 0
        for cut in sorted(set(c % (len(data) + 1) for c in cuts)) + [len(data)]:
            self.parts.append(data[last:cut])
            last = cut

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        while self.parts:
            part = self.parts.pop(0)
            if part:
                return part
        return b""


@pytest.mark.parametrize("engine", sorted(CORES))
@given(picks=st.lists(st.sampled_from(REAL), min_size=1, max_size=25),
       cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_chunked_parse_equals_whole_parse(engine: str, picks: list[str], cuts: list[int]) -> None:
    data = "\n".join(picks).encode()
    whole = [text for _, text in iter_lines(io.BytesIO(data))]
    chunked = [text for _, text in iter_lines(Chunks(data, cuts))]  # type: ignore[arg-type]
    assert chunked == whole
    assert CORES[engine].parse_lines(chunked) == CORES[engine].parse_lines(whole)


def _cross_engine_samples() -> list[tuple[str, str, str]]:
    out = []
    for name, engine in GRAMMAR.engines.items():
        for rule in engine.rules:
            for sample in rule.samples:
                out.append((name, rule.kind, sample.line))
    return out


@pytest.mark.parametrize(("owner", "kind", "line"), _cross_engine_samples())
def test_no_rule_types_a_line_as_the_other_engines_kind(owner: str, kind: str, line: str) -> None:
    for other in CORES:
        if other == owner:
            continue
        got = parse(other, line)["kind"]
        assert got not in ENGINE_ONLY_KINDS[owner] or got == kind and kind not in ENGINE_ONLY_KINDS[owner], (
            f"{other} grammar types a {owner} {kind} line as {got}: {line}")


# -- round trips: values rendered with the engine's own format strings parse back --------------
pct = st.floats(0, 100, allow_nan=False)
tps = st.floats(0, 2_000_000, allow_nan=False)
count = st.integers(0, 100_000)


def close(got: float, want: float, places: int) -> bool:
    return math.isclose(got, round(want, places), abs_tol=10 ** -places / 2 + 1e-9)


@given(idx=st.integers(0, 999), p=tps, g=tps, run=count, wait=count, kv=pct, hit=pct, pid=st.integers(1, 99999))
@example(idx=0, p=0.0, g=35.1, run=1, wait=0, kv=0.1, hit=0.0, pid=1)
def test_vllm_v1_stats_round_trip(idx: int, p: float, g: float, run: int, wait: int, kv: float, hit: float,
                                  pid: int) -> None:
    # vllm/v1/metrics/loggers.py 0.8.3..0.11.0 (vllm-log-formats.md §2.3)
    body = ("Engine %03d: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
            "Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%"
            % (idx, p, g, run, wait, kv, hit))
    event = parse("vllm", f"(APIServer pid={pid}) INFO 10-03 07:14:22 [loggers.py:127] {body}")
    assert event["kind"] == "engine_stats", body
    assert event["engine_idx"] == idx and event["running"] == run and event["waiting"] == wait
    assert event["pid"] == pid and event["rank"] == "APIServer"
    for field, value in (("prompt_tps", p), ("gen_tps", g), ("gpu_kv_pct", kv), ("prefix_hit_pct", hit)):
        assert close(event[field], value, 1), (field, event[field], value)


@given(p=tps, g=tps, run=count, sw=count, wait=count, kv=pct, cpu=pct, period=st.booleans())
def test_vllm_v0_stats_round_trip(p: float, g: float, run: int, sw: int, wait: int, kv: float, cpu: float,
                                  period: bool) -> None:
    # vllm/engine/metrics.py 0.4.2 (no period) and 0.4.3..0.10.2 (period) (§2.1)
    body = ("Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, "
            "Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: %.1f%%"
            % (p, g, run, sw, wait, kv, cpu)) + ("." if period else "")
    event = parse("vllm", f"INFO 12-27 00:19:06 metrics.py:467] {body}")
    assert event["kind"] == "engine_stats", body
    assert (event["running"], event["swapped"], event["waiting"]) == (run, sw, wait)
    assert close(event["gpu_kv_pct"], kv, 1) and close(event["cpu_kv_pct"], cpu, 1)
    assert close(event["prompt_tps"], p, 1) and close(event["gen_tps"], g, 1)


@given(mal=st.floats(1, 10), acc=tps, dra=tps, a=count, d=count,
       pos=st.lists(st.floats(0, 1), min_size=1, max_size=8), avg=pct)
def test_vllm_spec_decode_round_trip(mal: float, acc: float, dra: float, a: int, d: int, pos: list[float],
                                     avg: float) -> None:
    # vllm/v1/spec_decode/metrics.py 0.10.2..0.33.0 (§3.2)
    per_pos = ", ".join("%.3f" % x for x in pos)
    body = ("SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f tokens/s, "
            "Drafted throughput: %.2f tokens/s, Accepted: %d tokens, Drafted: %d tokens, "
            "Per-position acceptance rate: %s, Avg Draft acceptance rate: %.1f%%"
            % (mal, acc, dra, a, d, per_pos, avg))
    event = parse("vllm", f"(APIServer pid=3646) INFO 10-03 07:14:22 [metrics.py:96] {body}")
    assert event["kind"] == "spec_decode", body
    assert close(event["mean_accept_len"], mal, 2) and close(event["accepted_tps"], acc, 2)
    assert (event["accepted"], event["drafted"]) == (a, d)
    assert len(event["per_position"]) == len(pos)
    assert all(close(g, w, 3) for g, w in zip(event["per_position"], pos))
    assert close(event["draft_accept_pct"], avg, 1)


@given(run=count, tok=count, usage=st.floats(0, 1), gen=tps, queue=count,
       era=st.sampled_from(["D2", "D5", "D13", "D14"]), graph=st.booleans(), ranks=st.sampled_from(
           ["", " TP0", " DP3 TP3 EP3", " DP1 TP1"]))
def test_sglang_decode_round_trip(run: int, tok: int, usage: float, gen: float, queue: int, era: str,
                                  graph: bool, ranks: str) -> None:
    # scheduler.py / scheduler_metrics_mixin.py Decode line (sglang-log-formats.md §3.1)
    sep = ". " if era in {"D2", "D5"} else ", "
    graph_part = f"cuda graph: {graph}, " if era in {"D13", "D14"} else ""
    trail = ", " if era in {"D5", "D13"} else ""
    body = ("Decode batch%s#running-req: %d, #token: %d, token usage: %.2f, %sgen throughput (token/s): %.2f, "
            "#queue-req: %d%s" % (sep, run, tok, usage, graph_part, gen, queue, trail))
    event = parse("sglang", f"[2025-12-01 10:00:00{ranks}] {body}")
    assert event["kind"] == "decode_batch", body
    assert (event["running_req"], event["num_token"], event["queue_req"]) == (run, tok, queue)
    assert close(event["token_usage"], usage, 2) and close(event["gen_tps"], gen, 2)
    assert event["rank"] == (ranks.strip() or None)
    if graph_part:
        assert event["cuda_graph"] is graph


@given(seq=count, new=count, cached=count, usage=st.floats(0, 1), run=count, queue=count,
       era=st.sampled_from(["P_dot", "P_comma"]))
def test_sglang_prefill_round_trip(seq: int, new: int, cached: int, usage: float, run: int, queue: int,
                                   era: str) -> None:
    # Prefill line, 0.4.x ('. ') and 0.5.4.post1+ (', ' with trailing ', ') (sglang-log-formats.md §2.1)
    sep, trail = (". ", "") if era == "P_dot" else (", ", ", ")
    body = ("Prefill batch%s#new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, "
            "#running-req: %d, #queue-req: %d%s" % (sep, seq, new, cached, usage, run, queue, trail))
    event = parse("sglang", f"[2025-10-22 10:27:56 TP0] {body}")
    assert event["kind"] == "prefill_batch", body
    assert (event["new_seq"], event["new_token"], event["cached_token"]) == (seq, new, cached)
    assert (event["running_req"], event["queue_req"]) == (run, queue)
    assert close(event["token_usage"], usage, 2)


@given(cut=st.integers(1, len("Avg prompt throughput")))
def test_a_cri_partial_line_joins_its_successor_unless_read_alone(cut: int) -> None:
    # a real vLLM V1 stats line (patterns/vllm.toml, rule engine_stats_v1), split by the runtime
    # inside the words its rule needs
    line = next(s.line for r in GRAMMAR.engines["vllm"].rules if r.name == "engine_stats_v1" for s in r.samples)
    at = line.index("Avg prompt throughput") + cut
    split = [f"2026-05-12T08:01:39.331095044Z stdout P {line[:at]}", f"2026-05-12T08:01:39.33Z stdout F {line[at:]}"]
    joined = CORES["vllm"].parse_lines(split)
    assert [e["rule"] for e in joined] == ["partial", "engine_stats_v1"] and joined[1]["prompt_tps"] == 10.8
    assert joined[0]["_frame"]["partial"] and not joined[1]["_frame"]["partial"]
    alone = CORES["vllm"].parse_lines(split, alone=True)
    assert alone[0]["rule"] == "partial" and alone[1]["rule"] != "engine_stats_v1"
    assert alone[1].get("prompt_tps") is None
