"""Read the result objects that vLLM `bench serve` and SGLang `bench_serving` write as JSON.

SGLang's script began as a copy of vLLM's, so both write one object per run with the same core
keys (duration, completed, mean_ttft_ms, ...) and the same `<stat>_<metric>_ms` statistic keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import (
    Sample,
    json_stat_column,
    load_json_records,
    require,
    scaled_stats,
    to_int,
    to_number,
)
from logparse.bench.readers._per_request import fill_from_arrays
from logparse.errors import InputError

REQUIRED_KEYS = ("duration", "completed")
# a TTFT statistic every release writes: mean_ttft_ms, or median_ttft_ms alone in SGLang's
# bench_serving before its keys followed vLLM's (2024: median TTFT / ITL / E2E only)
TTFT_KEYS = ("mean_ttft_ms", "median_ttft_ms")


@dataclass(frozen=True)
class ResultObject:
    """One result object of a file, with readers that name the file, line and key in the
    InputError a bad value raises."""

    path: Path
    line_no: int
    values: dict[str, Any]

    def get(self, key: str) -> Any:
        """The raw value under `key`, or None."""
        return self.values.get(key)

    def number(self, key: str) -> float | None:
        """The value under `key` as a number, or None."""
        return to_number(self.get(key), path=self.path, where=self._where(key))

    def count(self, key: str) -> int | None:
        """Like `number`, rounded to int."""
        return to_int(self.get(key), path=self.path, where=self._where(key))

    def stats(self) -> dict[str, float | None]:
        """Latency statistics (`p90_e2el_ms`, ...) as schema columns, in schema units."""
        return scaled_stats(self.values, json_stat_column, path=self.path, where=self._where)

    def _where(self, key: str) -> str:
        return f"line {self.line_no} key {key!r}"


ObjectRecordBuilder = Callable[[int, ResultObject], dict[str, Any]]


def serving_json_keys(sample: Sample) -> frozenset[str] | None:
    """The top-level keys of the file's first result object if it holds a TTFT statistic both
    tools write (`TTFT_KEYS`), else None (the whole file is parsed, whatever order its keys
    come in)."""
    keys = sample.json_keys
    return keys if keys is not None and any(k in keys for k in TTFT_KEYS) else None


def read_result_objects(
    path: Path, text: str, *, expected: str, describe: str, to_record: ObjectRecordBuilder
) -> list[dict[str, Any]]:
    """Read every result object of a JSON/JSONL file into a schema record.

    `describe` names an object in errors, `{line_no}` standing for its line; `to_record` turns
    one object, given with its index in the file, into the tool's record; the object's latency
    statistics are added to it here, and those it lacks are computed from its per-request arrays.
    """
    records = []
    for index, (line_no, obj) in enumerate(load_json_records(path, text, expected=expected)):
        what = describe.format(line_no=line_no)
        require(obj, REQUIRED_KEYS, path=path, what=what)
        if not any(key in obj for key in TTFT_KEYS):
            msg = f"{path}: {what} is missing required key(s) {' or '.join(TTFT_KEYS)}"
            raise InputError(msg)
        result = ResultObject(path=path, line_no=line_no, values=obj)
        record = to_record(index, result)
        record.update(result.stats())
        fill_from_arrays(record, obj)
        records.append(record)
    return records
