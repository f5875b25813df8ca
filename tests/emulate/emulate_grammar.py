"""Regexes for the emulated lines, built here from the docs' format strings (not from the emulator).

The templates below are copied from `../shared/docs/vllm-log-formats.md` and
`sglang-log-formats.md` (section named on each); `test_emulate_formats.py` checks that the verbatim
ones still occur in the docs.
"""
from __future__ import annotations

import re
from datetime import datetime

ANSI = re.compile(r"\x1b\[[0-9;]*m")
DOCKER = re.compile(r"^(?P<docker>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) ")
COMPOSE = re.compile(r"^[\w-]+  \| ")

PLACEHOLDERS = {
    "%.1f": r"-?\d+\.\d", "%.2f": r"-?\d+\.\d{2}", "%.3f": r"(?:\d\.\d{3}|nan)", "%03d": r"\d{3}",
    "%d": r"\d+", "%s": r".+?", "%%": "%", "{int}": r"\d+", "{f2}": r"\d+\.\d{2}", "{f4}": r"\d+\.\d{4}",
    "{bool}": r"(?:True|False)", "{N}": r"\d+",
}
TOKEN = re.compile("|".join(re.escape(k) for k in PLACEHOLDERS))


def rx(template: str) -> str:
    """Regex source for a printf / `{f2}` style template; everything else is literal."""
    out, pos = [], 0
    for m in TOKEN.finditer(template):
        out.append(re.escape(template[pos:m.start()]))
        out.append(PLACEHOLDERS[m.group(0)])
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return "".join(out)


def opt(template: str) -> str:
    return f"(?:{rx(template)})?"


# -- vLLM (vllm-log-formats.md) -------------------------------------------------------------------

# §2.1, 0.4.3..0.10.2
VLLM_STATS_V0 = ("Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
                 "Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, "
                 "CPU KV cache usage: %.1f%%.")
# §2.3, 0.7.3..0.8.2 body; 0.8.3..0.11.0 prefixes `Engine %03d: `
VLLM_STATS_V1_BODY = ("Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
                      "Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, "
                      "Prefix cache hit rate: %.1f%%")
# §2.3 0.11.2+ parts, in order
VLLM_PARTS = ("Avg prompt throughput: %.1f tokens/s", "Avg generation throughput: %.1f tokens/s",
              "Running: %d reqs", "Waiting: %d reqs", "Preemptions: %d", "GPU KV cache usage: %.1f%%",
              "Prefix cache hit rate: %.1f%%")
# §3.1, 0.5.3..0.9.2
VLLM_SPEC_V0 = ("Speculative metrics: Draft acceptance rate: {draft_acceptance_rate:.3f}, "
                "System efficiency: {system_efficiency:.3f}, Number of speculative tokens: "
                "{num_spec_tokens}, Number of accepted tokens: {accepted_tokens}, Number of draft "
                "tokens: {draft_tokens}, Number of emitted tokens: {emitted_tokens}.")
# §3.2, 0.10.2..0.33.0
VLLM_SPEC_V1 = ("SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f tokens/s, "
                "Drafted throughput: %.2f tokens/s, Accepted: %d tokens, Drafted: %d tokens, Per-position "
                "acceptance rate: %s, Avg Draft acceptance rate: %.1f%%")
# §2.3 part 0 with --aggregate-engine-logging (0.11.2+), §2.4 the aggregated logger's start-up line
VLLM_AGGREGATED_PREFIX = "{N} Engines Aggregated: "
VLLM_ENGINES_BLOCKS = "%d Engines: vllm cache_config_info with initialization after num_gpu_blocks is: %d"
VLLM_VERBATIM = (VLLM_STATS_V1_BODY, VLLM_SPEC_V1, *VLLM_PARTS, VLLM_AGGREGATED_PREFIX, VLLM_ENGINES_BLOCKS,
                 "Prefix cache hit rate: GPU: %.2f%%, CPU: %.2f%%",
                 "Graph capturing finished in %.0f secs, took %.2f GiB",
                 "GPU KV cache size: %s tokens", "Maximum concurrency for %s tokens per request: %.2fx",
                 "init engine (profile, create kv cache, warmup model) took %.2f seconds",
                 "Model loading took %.4f GiB and %.6f seconds",
                 "Model loading took %s GiB memory and %.6f seconds")

VLLM_PREFIX = {
    "0.6": re.compile(r"^(?:\(VllmWorkerProcess pid=\d+\) )?(?P<level>DEBUG|INFO|WARNING|ERROR) "
                      r"(?P<ts>\d\d-\d\d \d\d:\d\d:\d\d) (?P<file>[\w.]+):(?P<line>\d+)\] (?P<msg>.*)$",
                      re.S),
    "v1": re.compile(r"^\((?P<proc>APIServer|EngineCore_DP0|EngineCore|Worker_TP\d+) pid=(?P<pid>\d+)\) "
                     r"(?P<level>DEBUG|INFO|WARNING|ERROR) (?P<ts>\d\d-\d\d \d\d:\d\d:\d\d) "
                     r"\[(?P<file>[\w./]+):(?P<line>\d+)\] (?P<msg>.*)$", re.S),
}


def vllm_stats_regex(era: str, aggregated: bool = False) -> re.Pattern[str]:
    """The stats message of `era` (after the prefix); `aggregated`: the `{N} Engines Aggregated: `
    line of --aggregate-engine-logging (0.11.2+) instead of `Engine %03d: `."""
    if era == "0.6":
        return re.compile(rx(VLLM_STATS_V0))
    if era == "0.10":
        return re.compile(rx("Engine %03d: " + VLLM_STATS_V1_BODY))
    p = [rx(part) for part in VLLM_PARTS]
    head = rx(VLLM_AGGREGATED_PREFIX if aggregated else "Engine %03d: ")
    return re.compile(head + ", ".join(p[:4]) + f"(?:, {p[4]})?, {p[5]}(?:, {p[6]})?")


def vllm_spec_regex(era: str) -> re.Pattern[str]:
    """The speculative-decoding metrics message of `era`."""
    if era == "0.6":
        text = re.sub(r"\{draft_acceptance_rate:\.3f\}|\{system_efficiency:\.3f\}", "%.3f", VLLM_SPEC_V0)
        return re.compile(rx(re.sub(r"\{\w+\}", "%d", text)))
    return re.compile(rx(VLLM_SPEC_V1).replace(r".+?", r"\d\.\d{3}(?:, \d\.\d{3})*"))


# -- SGLang (sglang-log-formats.md) ---------------------------------------------------------------

# §2.1 P14 full grammar, verbatim
SGLANG_P14 = ("Prefill batch[ [{int}]], #new-seq: {int}, #new-token: {int}, #cached-token: {int}, {USAGE}, "
              "#running-req: {int}, #queue-req: {int}, #pending-token: {int}, ")
# §3.1 D7 example shape, D13 and D14 grammar pieces
SGLANG_D14 = "accept len: {f2}, accept rate: {f2}, "
SGLANG_VERBATIM = (
    SGLANG_P14, SGLANG_D14, "#token: {int}, token usage: {f2}",
    "#full token: {int}, full token usage: {f2}, mamba num: {int}, mamba usage: {f2}",
    "full token usage: {f2}, mamba usage: {f2}",
    "Prefill batch. #new-seq: 1, #new-token: 64, #cached-token: 0, token usage: 0.00, "
    "#running-req: 0, #queue-req: 0",
)
SGLANG_PREFIX = re.compile(r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?P<ranks>(?: (?:DP|PP|TP|EP)\d+)*)\] "
                           r"(?P<msg>.*)$", re.S)
PREFILL_USAGE = f"(?:{rx('token usage: {f2}')}|{rx('full token usage: {f2}, mamba usage: {f2}')})"
DECODE_USAGE = (f"(?:{rx('#token: {int}, token usage: {f2}')}|"
                f"{rx('#full token: {int}, full token usage: {f2}, mamba num: {int}, mamba usage: {f2}')})")
HEAD = rx("#new-seq: {int}, #new-token: {int}, #cached-token: {int}, ")


def sglang_prefill_regex(era: str) -> re.Pattern[str]:
    """The Prefill message of `era`: P5 (0.4.x), P11 (0.5.4.post1..0.5.8), P14."""
    tail = rx(", #running-req: {int}, #queue-req: {int}")
    if era == "0.4":
        return re.compile(rx("Prefill batch. ") + HEAD + rx("token usage: {f2}") + tail)
    if era == "0.5.6":
        return re.compile(rx("Prefill batch, ") + HEAD + PREFILL_USAGE + tail + rx(", "))
    return re.compile(rx("Prefill batch, ") + HEAD + PREFILL_USAGE + tail
                      + rx(", #pending-token: {int}, cuda graph: {bool}, input throughput (token/s): {f2}"))


def sglang_decode_regex(era: str) -> re.Pattern[str]:
    """The Decode message of `era`: D7 (`. `), D13 (`, ` + trailing `, `), D14."""
    tail = rx("cuda graph: {bool}, gen throughput (token/s): {f2}, #queue-req: {int}")
    if era == "0.4":
        return re.compile(rx("Decode batch. #running-req: {int}, #token: {int}, token usage: {f2}, ")
                          + opt("accept len: {f2}, ") + tail)
    spec = opt(SGLANG_D14)
    body = rx("Decode batch, #running-req: {int}, ") + DECODE_USAGE + rx(", ") + spec + tail
    return re.compile(body + (rx(", ") if era == "0.5.6" else ""))


def strip(line: str) -> tuple[str, str | None]:
    """Drop wrappers and ANSI colour; return the bare line and the docker stamp if any."""
    docker = None
    m = DOCKER.match(line)
    if m:
        docker, line = m.group("docker"), line[m.end():]
    line = COMPOSE.sub("", line, count=1)
    return ANSI.sub("", line), docker


NUM = re.compile(r"-?\d+(?:\.\d+)?")


def fields(msg: str) -> dict[str, float]:
    """`key: number` pairs of a stats/Prefill/Decode message, keys lower-cased as printed."""
    out = {}
    for m in re.finditer(r"(#?[A-Za-z][\w ./()-]*?): (-?\d+(?:\.\d+)?)", msg):
        out[m.group(1).strip()] = float(m.group(2))
    return out


def engine_time(engine: str, msg_ts: str, year: int) -> datetime:
    """A printed engine timestamp as a datetime (vLLM stamps get `year`)."""
    if engine == "vllm":
        return datetime.strptime(f"{year}-{msg_ts}", "%Y-%m-%d %H:%M:%S")
    return datetime.strptime(msg_ts, "%Y-%m-%d %H:%M:%S")
