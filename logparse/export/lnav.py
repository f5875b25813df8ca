"""logparse's grammars as lnav log formats (lnav's `format-v1` JSON schema), one per engine.

A format `logparse_<engine>` holds:

* `regex`: one entry per envelope shape of the grammar's sample lines (`lnav_shapes`), with
  `timestamp` (logparse `ts`), `outer_ts`, `level`, `rank`, `pid`, `task` and `body` groups;
* `timestamp-format`: the formats of the samples' stamps (`lnav_time`); `level`: logparse's
  level words and codes as lnav levels (`lnav_levels`); `value`: the envelope fields with kinds;
* `search-table`: one table `<engine>_<rule>` per message and stats rule (`lnav_tables`), so
  `;SELECT gen_tps FROM vllm_engine_stats_v1` reads a field as logparse types it;
* `sample`: the grammar's sample lines the shapes take, with their level, so lnav's own format
  check validates the regexes, the stamps and the levels when it loads the file.

`notes` says what a format leaves out. `write_formats` writes `<format>.json` files.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from logparse.engine import compiled
from logparse.export.lnav_levels import level_map, lnav_level, printed_level
from logparse.export.lnav_shapes import (
    BODY,
    OUTER_TS,
    TIMESTAMP,
    Line,
    guard_of,
    sample_lines,
    shapes_of,
)
from logparse.export.lnav_tables import Table, rule_tables, type_notes
from logparse.export.lnav_time import lnav_format
from logparse.grammar import Grammar
from logparse.ingest.detect import GENERIC_KINDS
from logparse.store.folder import write_file, writing

SCHEMA = "https://lnav.org/schemas/format-v1.schema.json"
PREFIX = "logparse_"
# The envelope fields lnav shows as columns: (kind, what it is); `level` is lnav's `log_level`.
VALUES: dict[str, dict[str, Any]] = {
    OUTER_TS: {
        "kind": "string",
        "description": "the outermost timestamp when a line has several (logparse outer_ts)",
    },
    "rank": {
        "kind": "string",
        "identifier": True,
        "description": "process or rank label (TP0, EngineCore_DP0, ...)",
    },
    "pid": {"kind": "integer", "identifier": True, "foreign-key": True, "description": "process id"},
    "task": {
        "kind": "string",
        "identifier": True,
        "description": "a scheduler's task label (srun, mpirun, torchrun)",
    },
}


@dataclass(frozen=True)
class LnavFormat:
    """One engine's lnav format: its JSON document and what it leaves out."""

    name: str
    engine: str
    document: dict[str, Any]
    notes: tuple[str, ...]
    tables: tuple[Table, ...] = ()  # the search tables, as built

    @property
    def file_name(self) -> str:
        return f"{self.name}.json"

    def text(self) -> str:
        """The format file's text."""
        return json.dumps(self.document, indent=2, ensure_ascii=False) + "\n"

    @property
    def body(self) -> dict[str, Any]:
        """The format's own object (the document's entry under its name)."""
        return dict(self.document[self.name])


def format_name(engine: str) -> str:
    """The lnav format (and SQL table) name of an engine's format."""
    return PREFIX + engine


def build_formats(grammar: Grammar, engines: Sequence[str] | None = None) -> list[LnavFormat]:
    """The lnav formats of `engines` (default: every engine of the grammar)."""
    return [build_format(grammar, engine) for engine in (engines or sorted(grammar.engines))]


def build_format(grammar: Grammar, engine: str) -> LnavFormat:
    """The lnav format of one engine's grammar."""
    every = sample_lines(grammar, engine)
    scorer = _Scorer(grammar, [line.text for line in every])
    lines = [line for line in every if scorer.belongs(engine, line)]
    shapes, shapeless = shapes_of(grammar, lines)
    regexes: dict[str, dict[str, str]] = {}
    samples: list[dict[str, str]] = []
    stamps: set[str] = set()
    notes: list[str] = []
    unreadable = 0
    for shape in shapes:
        pattern = shape.regex(guard_of(shape, shapes))
        compiled = regex.compile(pattern, regex.V0)
        kept = []
        for line in shape.lines:
            m = compiled.match(line.text)
            if m is None:  # cannot happen: the shape is the line's; kept out rather than break lnav
                notes.append(f"{shape.name}: its regex does not match its sample {line.origin}")
                continue
            stamp = lnav_format(grammar.envelope, m.group(TIMESTAMP))
            if stamp is None:
                unreadable += 1
                continue
            stamps.add(stamp)
            kept.append(_sample(grammar, line, m, notes))
        if kept:
            regexes[shape.name] = {"pattern": pattern}
            samples.extend(kept)
    tokens = {token.name for shape in shapes if shape.name in regexes for token in shape.slots}
    envelope = [token for token in grammar.envelope.tokens if token.name in tokens]
    tables, untabled = rule_tables(grammar, engine, envelope)
    if len(every) > len(lines):
        notes.append(
            f"{len(every) - len(lines)} sample lines look more like another engine's and are not "
            "samples, so the formats do not claim each other's files"
        )
    notes += _notes(shapeless, unreadable, untabled, tables)
    patterns = " ".join(entry["pattern"] for entry in regexes.values())
    title = grammar.engines[engine].title
    body: dict[str, Any] = {
        "title": f"{title} (logparse)",
        "description": (
            f"{title} server logs as logparse's grammars read them (generated by `logparse export "
            f"lnav`): one regex per envelope shape of the grammar's sample lines; every message rule "
            f"is a search table named {engine}_<rule> whose columns are the rule's fields."
        ),
        "regex": regexes,
        "timestamp-field": TIMESTAMP,
        "timestamp-format": sorted(stamps, key=lambda s: (-len(s), s)),
        "level-field": "level",
        "level": level_map(grammar.envelope),
        "body-field": BODY,
        "value": {name: spec for name, spec in VALUES.items() if f"(?<{name}>" in patterns},
        "search-table": {table.name: table.entry() for table in tables},
        "sample": samples,
    }
    name = format_name(engine)
    document = {"$schema": SCHEMA, name: body}
    return LnavFormat(name=name, engine=engine, document=document, notes=tuple(notes), tables=tuple(tables))


class _Scorer:
    """How much a line looks like each engine's, as `ingest.detect.score` scores a log's head
    (a marker settles it, a signature or a typed kind is evidence, a kind all engines type half)."""

    def __init__(self, grammar: Grammar, texts: Sequence[str]) -> None:
        self.grammar = grammar
        unique = sorted(set(texts))
        # the kind each engine's core gives each line, read alone (one call per engine)
        self.kinds = {
            name: {
                text: event["kind"]
                for text, event in zip(
                    unique, compiled(grammar, name).parse_lines(unique, alone=True), strict=True
                )
            }
            for name in grammar.engines
        }
        kinds = [{r.kind for r in e.rules} for e in grammar.engines.values()]
        self.shared = set.intersection(*kinds) if len(kinds) > 1 else set()

    def score(self, engine: str, text: str) -> float:
        grammar = self.grammar.engines[engine]
        if any(marker in text for marker in grammar.markers):
            return 1.0
        if any(s.search(text[:4096]) for s in grammar.signatures):
            return 1.0
        kind = self.kinds[engine][text]
        if kind in GENERIC_KINDS:
            return 0.0
        return 0.5 if kind in self.shared else 1.0

    def belongs(self, engine: str, line: Line) -> bool:
        """Whether a sample line goes in this engine's format: no other engine scores it higher
        (an envelope sample must score highest for this engine), so two engines' formats do not
        claim each other's files."""
        mine = self.score(engine, line.text)
        others = max((self.score(e, line.text) for e in self.grammar.engines if e != engine), default=0.0)
        return mine > others if line.origin.startswith("token ") else mine >= others


def _sample(grammar: Grammar, line: Line, m: regex.Match[str], notes: list[str]) -> dict[str, str]:
    """The lnav sample entry of a line, with the level logparse reads (when lnav reads it alike)."""
    entry = {"line": line.text, "description": line.origin}
    recorded = line.event.get("level")
    wanted = lnav_level(recorded if isinstance(recorded, str) else None)
    captured = m.groupdict().get("level")
    read = printed_level(grammar.envelope, captured)
    if wanted is not None and wanted == read:
        entry["level"] = wanted
    elif wanted != read:
        notes.append(f"{line.origin}: lnav reads level {read}, logparse {recorded}")
    for group in ("rank", "pid", "task", OUTER_TS):
        theirs = line.event.get(group)
        ours = m.groupdict().get(group)
        if theirs is not None and str(theirs) != ours:
            notes.append(f"{line.origin}: lnav reads {group} {ours!r}, logparse {theirs!r}")
    return entry


def _notes(
    shapeless: Sequence[Line],
    unreadable: int,
    untabled: Sequence[str],
    tables: Sequence[Any],
) -> list[str]:
    notes = []
    if shapeless:
        notes.append(
            f"{len(shapeless)} sample lines start no lnav message (no timestamp, a JSON record, text "
            "before the record) and are not samples; lnav shows such lines as part of the message before them"
        )
    if unreadable:
        notes.append(
            f"{unreadable} sample lines have a timestamp lnav cannot read (e.g. non-English month names)"
        )
    notes += [f"no search table for {note}" for note in untabled]
    left = sorted({f for table in tables for f in table.left_out if f != "extra"})
    if left:
        notes.append(
            "fields some search tables leave out (constants, templates, derived): " + ", ".join(left)
        )
    notes += type_notes(tables)
    return notes


def prepare_folder(folder: Path) -> None:
    """Create the output folder (and its parents) if missing; `OutputError` when it cannot be
    (a file in the way, no permission): checked before the formats are built."""
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "permission denied")


def write_formats(formats: Iterable[LnavFormat], folder: Path) -> list[Path]:
    """Write each format as `<folder>/<format>.json` (created if missing; a file of the same name
    is replaced, other files are kept). Raises `OutputError` when the folder cannot be written."""
    written = []
    prepare_folder(folder)
    for fmt in formats:
        target = folder / fmt.file_name
        write_file(target, fmt.text())
        written.append(target)
    return written
