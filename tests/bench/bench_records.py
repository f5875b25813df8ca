"""Hand-made benchmark records that several bench test modules build."""
from __future__ import annotations

from typing import Any

from logparse.bench.derive import complete_record
from logparse.bench.schema import empty_record


def cordatus_run(index: int, concurrency: int, **columns: Any) -> dict[str, Any]:
    """A completed record of one run of the 'vllm direct' configuration at `concurrency`, as a
    Cordatus table row gives it (128 output tokens requested per request), with `columns` set."""
    rec = empty_record()
    rec.update(
        source_file="table.csv",
        source_tool="cordatus_csv",
        record=index,
        engine="vllm",
        mode="direct",
        concurrency=concurrency,
        output_len_requested=128,
        **columns,
    )
    return complete_record(rec)
