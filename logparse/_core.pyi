"""The compiled core (Rust, `core/src/py.rs`): a grammar compiled per engine (`Core`) reads a log
(`Reader`) into Parquet files or Arrow batches (`ArrowBatch`) in one call, and reads a few lines
for the grammar tooling (`parse_lines`, `rules_reading`, `read_stamp`).

This stub is the boundary's contract for mypy; the shapes below are what `py.rs` builds.
"""

from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

__version__: str

class ReadStats(TypedDict):
    """What reading counted."""

    bytes_read: int
    lines: int
    invalid_utf8_lines: int
    nul_lines: int
    longest_line: int
    truncated_last_line: bool
    notes: list[str]
    long_lines: int
    long_line_bytes_skipped: int

class TimeFacts(TypedDict):
    """How a log's times were made."""

    zone: str
    zone_assumed: bool
    exact: int
    naive: int
    year_inferred: int
    date_inferred: int
    inferred_from: str | None
    anchor: str | None
    rollovers: int

class Stages(TypedDict):
    """Seconds per stage of one ingest, summed over the threads that ran it."""

    read: float
    parse: float
    finish: float
    close: float
    write: float

class IngestOutcome(TypedDict):
    """What `Core.ingest` learned; `tables` (kind -> batches) when they were kept in memory."""

    counts: dict[str, int]
    rule_counts: list[tuple[str, str | None, int]]
    extra_keys: list[tuple[str, str, int]]
    kinds: list[str]
    stats: ReadStats
    times: TimeFacts
    restarts: int
    span: tuple[int, int] | None
    ranks: list[str]
    stages: Stages
    tables: NotRequired[dict[str, list[ArrowBatch]]]

class StampParts(TypedDict):
    """The parts of a printed stamp (None: not printed); `zone` in minutes east of UTC,
    `epoch_us` for epoch numbers; `completeness` ranks how much the stamp says (1-5)."""

    completeness: int
    year: int | None
    month: int | None
    day: int | None
    hour: int
    minute: int
    second: int
    micro: int
    zone: int | None
    epoch_us: int | None

class Note(TypedDict):
    """What one envelope layer told: `source` is the token's name (or the JSON record's)."""

    source: str
    ts: str | None
    level: str | None
    rank: str | None
    pid: int | None
    task: str | None

class Frame(TypedDict):
    """A line's envelope peeled alone: the message (`body`), the text it was found in (`text`), the
    notes of every layer outermost first, how many of them are outside `text` (`outer`), and
    whether it is a CRI partial line."""

    body: str
    text: str
    outer: int
    partial: bool
    notes: list[Note]

# One event per line: `kind`, `rule`, `ts`, `outer_ts`, `engine`, `rank`, `pid`, `level`, `task`,
# `prefix`, the rule's fields by column name (`raw` for `unparsed`), `_time` (a `StampParts` or
# None) and `_frame` (a `Frame`). A plain dict: its field keys depend on the rule.
LineEvent = dict[str, Any]

class ArrowBatch:
    """An Arrow record batch, handed over through the Arrow PyCapsule interface."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    @property
    def num_rows(self) -> int: ...

class Reader:
    """A log opened for reading: its head for detection, then `Core.ingest` reads it."""

    def __init__(self, path: str, block_bytes: int, max_line: int) -> None: ...
    @staticmethod
    def from_stream(
        stream: Any, name: str, block_bytes: int, max_line: int, size: int | None = None, spool: bool = True
    ) -> Reader: ...
    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int | None: ...
    def head(self, wanted: int) -> list[str]: ...
    def next_lines(self) -> tuple[int, list[str]] | None: ...
    def stats(self) -> ReadStats: ...

class Core:
    """One engine's compiled grammar (a spec from `logparse.engine.spec`, as JSON)."""

    def __init__(self, spec_json: str) -> None: ...
    def ingest(
        self,
        reader: Reader,
        options: dict[str, Any],
        *,
        folder: str | None = None,
        layout: str = "flat",
        memory: bool = True,
        sink: Any = None,
        jsonl: Any = None,
        progress: Callable[[int, int | None], None] | None = None,
        cancel: Any = None,
    ) -> IngestOutcome: ...
    def parse_lines(self, lines: list[str], *, alone: bool = False) -> list[LineEvent]: ...
    def rules_reading(self, body: str, level: str | None = None) -> list[str]: ...
    def read_stamp(self, text: str) -> StampParts | None: ...
    def schemas(self) -> dict[str, ArrowBatch]: ...

def convert(text: str, type: str) -> Any:
    """A captured text as a field of `type` (`int`, `float`, `str`, `bool`, `floats`) holds it;
    None when it does not read as that type."""
