"""Read client benchmark result files of any supported tool into the one tidy table.

The format is detected from the content (pygments-style scores in [0, 1], first registry entry
wins ties), never from the file extension; JSON is parsed whole for it, never sniffed by its head.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from logparse.bench.derive import complete_record, disambiguate_configs
from logparse.bench.readers import aiperf, cordatus, sglang, vllm
from logparse.bench.readers._common import STDIN, STDIN_NAME, Sample, read_text
from logparse.bench.schema import to_frame
from logparse.errors import InputError

__all__ = ["FORMATS", "Format", "detect_format", "load_bench", "read_bench_file"]


@dataclass(frozen=True)
class Format:
    """A benchmark result format: its name, a content sniffer and a reader."""

    name: str
    description: str
    sniff: Callable[[Sample, Path], float]
    read: Callable[[Path, str], list[dict[str, Any]]]


FORMATS: tuple[Format, ...] = (
    Format("vllm_bench_json", "vllm bench serve result JSON", vllm.sniff_json, vllm.read_json),
    Format("sglang_bench_jsonl", "SGLang bench_serving JSONL", sglang.sniff_jsonl, sglang.read_jsonl),
    Format("vllm_bench_summary", "vllm bench serve printed summary", vllm.sniff_summary, vllm.read_summary),
    Format(
        "sglang_bench_summary",
        "SGLang bench_serving printed summary",
        sglang.sniff_summary,
        sglang.read_summary,
    ),
    Format("cordatus_csv", "CordatusAI llm-benchmark table CSV", cordatus.sniff, cordatus.read),
    Format("aiperf_csv", "AIPerf / genai-perf CSV export", aiperf.sniff, aiperf.read),
)


def detect_format(path: Path, text: str) -> Format:
    """Return the format whose sniffer scores `text` highest; InputError when none recognises it.

    JSON is parsed whole and a printed result block is looked for in the whole text: the key
    that tells a format apart may come after megabytes of per-request arrays or progress output.
    """
    sample = Sample(text)
    best: tuple[float, Format] | None = None
    for fmt in FORMATS:
        try:
            score = min(1.0, max(0.0, float(fmt.sniff(sample, path))))
        except Exception:
            score = 0.0
        if score > 0 and (best is None or score > best[0]):
            best = (score, fmt)
    if best is None:
        expected = "; ".join(fmt.description for fmt in FORMATS)
        msg = f"{path}: not a recognised benchmark result; expected one of: {expected}"
        raise InputError(msg)
    return best[1]


def read_bench_file(path: str | Path, *, engine: str | None = None) -> list[dict[str, Any]]:
    """Read one result file (`-`: standard input) into completed schema records (one per run);
    `engine` (the user's word) names the server of runs whose file does not."""
    text = read_text(Path(path))
    file = STDIN_NAME if str(path) == STDIN else Path(path)
    fmt = detect_format(file, text)
    records = fmt.read(file, text)
    if not records:
        msg = f"{file}: holds no benchmark runs; expected {fmt.description}"
        raise InputError(msg)
    if engine:
        records = [{**r, "engine": r.get("engine") or engine.strip().lower()} for r in records]
    return [complete_record(record) for record in records]


def load_bench(paths: Iterable[str | Path], *, engine: str | None = None) -> pl.DataFrame:
    """Read result files of any supported tool into the tidy table (see `logparse.bench.schema`).

    A run's engine is what its file says the server was (vLLM `--metadata engine=...`, SGLang's
    `server_info`, a backend only one server speaks), else `engine`, else unknown (null): a
    client backend such as `vllm` or `openai` is the protocol the client spoke, which every
    engine serves. Runs of unknown engine are named by their file, never merged across files.

    Examples
    --------
    >>> df = load_bench(["fixtures/bench/openzeka_b300_kimi_k3_128x128.csv"])  # doctest: +SKIP
    >>> df.select("config", "concurrency", "ttft_ms_p90").head(2)  # doctest: +SKIP
    """
    paths = list(paths)
    if sum(str(path) == STDIN for path in paths) > 1:
        msg = "standard input ('-') can be read once only; give the other results as files"
        raise InputError(msg)
    records: list[dict[str, Any]] = []
    for path in paths:
        records.extend(read_bench_file(path, engine=engine))
    return disambiguate_configs(to_frame(records))
