"""Split the 'Serving Benchmark Result' blocks that vLLM and SGLang print, into label -> value.

Both tools print `"{:<40} {:<10}"` lines (so values carry trailing spaces) between a
`==== Serving Benchmark Result ====` header and a line of `=`, with `---- Section ----` rules.
A console capture may hold several blocks (one per run) and other output between them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import stat_column, to_number
from logparse.errors import InputError

HEADER = re.compile(r"^=+\s*Serving Benchmark Result\s*=+\s*$")
_END = re.compile(r"^={10,}\s*$")
_SECTION = re.compile(r"^-{3,}.*-{3,}\s*$")
_PAIR = re.compile(r"^(.+?):\s+(.+?)\s*$")
_STAT_LABEL = re.compile(r"^(Mean|Median|P\d+(?:\.\d+)?) (TTFT|TPOT|ITL|E2EL|E2E Latency) \(ms\)$")


@dataclass
class Block:
    """One printed result block: where it starts, the text before it, and its label/value pairs."""

    line_no: int
    preamble: list[str]
    values: dict[str, str] = field(default_factory=dict)


def split_blocks(path: Path, text: str, *, expected: str) -> list[Block]:
    """Return every result block of a console capture; malformed blocks raise InputError."""
    blocks: list[Block] = []
    preamble: list[str] = []
    current: Block | None = None
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if current is None:
            if HEADER.match(line.strip()):
                current = Block(line_no=no, preamble=preamble)
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


def block_stats(path: Path, block: Block) -> dict[str, float | None]:
    """Latency statistics of a block ('Mean TTFT (ms)', 'P90 E2E Latency (ms)', ...) as schema columns."""
    out: dict[str, float | None] = {}
    for label, raw in block.values.items():
        match = _STAT_LABEL.match(label)
        if match is None:
            continue
        target = stat_column(match.group(2), match.group(1))
        if target is None:
            continue
        column, factor = target
        value = to_number(raw, path=path, where=f"'{label}' (block of line {block.line_no})")
        out[column] = None if value is None else value * factor
    return out


def block_value(path: Path, block: Block, *labels: str, required: bool = False) -> Any:
    """Raw value of the first label present, or None; `required` makes absence an InputError."""
    for label in labels:
        if label in block.values:
            return block.values[label]
    if required:
        msg = f"{path}: the result block of line {block.line_no} has no '{labels[0]}:' line"
        raise InputError(msg)
    return None
