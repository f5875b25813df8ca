"""Read the 'Serving Benchmark Result' blocks that vLLM and SGLang print, by label -> value.

Both tools print `"{:<40} {:<10}"` lines (so values carry trailing spaces) between a
`==== Serving Benchmark Result ====` header and a line of `=`, with `---- Section ----` rules.
A console capture may hold several blocks (one per run) and other output between them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import scaled_stats, stat_column, to_number
from logparse.errors import InputError

HEADER = re.compile(r"^=+\s*Serving Benchmark Result\s*=+\s*$")
_END = re.compile(r"^={10,}\s*$")
_SECTION = re.compile(r"^-{3,}.*-{3,}\s*$")
_PAIR = re.compile(r"^(.+?):\s+(.+?)\s*$")
_STAT_LABEL = re.compile(r"^(Mean|Median|P\d+(?:\.\d+)?) (TTFT|TPOT|ITL|E2EL|E2E Latency) \(ms\)$")


@dataclass
class Block:
    """One printed result block: its file, where it starts, the text before it, and its label/value pairs.

    Its readers name the file, the block and the label in the InputError a bad value raises.
    """

    path: Path
    line_no: int
    preamble: list[str]
    values: dict[str, str] = field(default_factory=dict)

    def value(self, *labels: str, required: bool = False) -> Any:
        """Raw value of the first label present, or None; `required` makes absence an InputError."""
        for label in labels:
            if label in self.values:
                return self.values[label]
        if required:
            msg = f"{self.path}: the result block of line {self.line_no} has no '{labels[0]}:' line"
            raise InputError(msg)
        return None

    def number(self, *labels: str, required: bool = False) -> float | None:
        """The value of the first label present, as a number (see `value`)."""
        raw = self.value(*labels, required=required)
        return to_number(raw, path=self.path, where=self._where(labels[0]))

    def count(self, *labels: str, required: bool = False) -> int | None:
        """Like `number`, rounded to int (the tools print some counts as '23.00')."""
        number = self.number(*labels, required=required)
        return None if number is None else round(number)

    def stats(self) -> dict[str, float | None]:
        """Latency statistics ('Mean TTFT (ms)', 'P90 E2E Latency (ms)', ...) as schema columns."""
        return scaled_stats(self.values, label_stat_column, path=self.path, where=self._where)

    def _where(self, label: str) -> str:
        return f"'{label}' (block of line {self.line_no})"


def label_stat_column(label: str) -> tuple[str, float] | None:
    """Map a printed label such as 'P90 E2E Latency (ms)' to (schema column, unit factor)."""
    match = _STAT_LABEL.match(label)
    return stat_column(match.group(2), match.group(1)) if match else None


BlockRecordBuilder = Callable[[int, Block], dict[str, Any]]


def has_result_header(text: str) -> bool:
    """Whether any line of `text` is a 'Serving Benchmark Result' header."""
    return any(HEADER.match(line.strip()) for line in text.splitlines())


def read_result_blocks(
    path: Path, text: str, *, expected: str, to_record: BlockRecordBuilder
) -> list[dict[str, Any]]:
    """Read every result block of a console capture into a schema record.

    `to_record` turns one block, given with its index in the file, into the tool's record; the
    block's latency statistics are added to it here.
    """
    records = []
    for index, block in enumerate(split_blocks(path, text, expected=expected)):
        record = to_record(index, block)
        record.update(block.stats())
        records.append(record)
    return records


def split_blocks(path: Path, text: str, *, expected: str) -> list[Block]:
    """Return every result block of a console capture; malformed blocks raise InputError."""
    blocks: list[Block] = []
    preamble: list[str] = []
    current: Block | None = None
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if current is None:
            if HEADER.match(line.strip()):
                current = Block(path=path, line_no=no, preamble=preamble)
                preamble = []
            else:
                preamble.append(line)
            continue
        stripped = line.strip()
        if _END.match(stripped):
            blocks.append(current)
            current = None
        elif not stripped or _SECTION.match(stripped):
            continue
        elif HEADER.match(stripped):
            msg = f"{path}: line {no}: a new result block starts inside the block of line {current.line_no}"
            raise InputError(msg)
        else:
            pair = _PAIR.match(stripped)
            if pair is None:
                msg = f"{path}: line {no}: {stripped!r} is not a 'Label: value' line; expected {expected}"
                raise InputError(msg)
            current.values[pair.group(1).strip()] = pair.group(2).strip()
    if current is not None:
        msg = f"{path}: the result block of line {current.line_no} has no closing '=====' line (truncated?)"
        raise InputError(msg)
    if not blocks:
        msg = f"{path}: no 'Serving Benchmark Result' block; expected {expected}"
        raise InputError(msg)
    return blocks
