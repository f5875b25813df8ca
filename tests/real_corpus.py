"""Score logparse against a folder of labelled real excerpts, kinds, fields and precision.

The folder holds `*.log` excerpts and `labels.jsonl` in the label format of
`../shared/real-logs/LABELS.md`: one object per line of a kind other than `unparsed` (`file`,
`line_no`, `kind`, then the values read off the line) and one `{"file", "totals"}` object per file,
so every line of every excerpt has a label (a line not listed is `unparsed`). An `unparsed` line may
be listed too, with the envelope values read off it (`ts`, `level`, ...): they are scored as fields.

Scored, per engine:

- kind: of the labelled lines (kind other than `unparsed`), those typed as their label's kind;
- fields: every value of a label (the common `ts`, `level`, `rank`, `pid` included) against the
  event's column, numbers to 1e-6 relative, `ts` by its printed digits, `mode` by containment
  (as `../shared/tools/conformance.py` compares them);
- precision: lines typed as a kind their label does not have (an `unparsed` label included), per
  kind typed. A line is right or `unparsed`, never another kind: this count must stay 0.

    python tests/real_corpus.py fixtures/real/corpus/sglang -v     # -v lists every miss
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

META = {"file", "line_no", "kind", "engine", "truncated"}


@dataclass(frozen=True)
class Miss:
    """One scored value that differs: where, what the label says and what logparse gave."""

    file: str
    line_no: int
    what: str  # "kind" or the field name
    want: Any
    got: Any
    line: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line_no}: {self.what} want {self.want!r}, got {self.got!r}  | {self.line[:160]}"


@dataclass
class Score:
    """The counts of one corpus folder."""

    engine: str
    files: int = 0
    lines: int = 0
    kind_ok: int = 0
    kind_n: int = 0
    field_ok: int = 0
    field_n: int = 0
    typed: Counter[str] = field(default_factory=Counter)  # lines per kind logparse typed
    kind_misses: list[Miss] = field(default_factory=list)  # labelled lines not typed as their kind
    wrong_kind: list[Miss] = field(default_factory=list)  # typed as a kind the label does not have
    field_misses: list[Miss] = field(default_factory=list)

    @property
    def kind_pct(self) -> float:
        """Labelled lines typed as their label's kind, in percent."""
        return 100.0 * self.kind_ok / self.kind_n if self.kind_n else 100.0

    @property
    def field_pct(self) -> float:
        """Label values equal to the event's, in percent."""
        return 100.0 * self.field_ok / self.field_n if self.field_n else 100.0

    def wrong_by_kind(self) -> Counter[str]:
        """Lines typed as a kind their label does not have, per kind typed."""
        return Counter(str(m.got) for m in self.wrong_kind)

    def summary(self) -> str:
        """One line: kind and field accuracy, and precision per kind typed."""
        wrong = self.wrong_by_kind()
        precision = ", ".join(
            f"{k} {self.typed[k] - wrong[k]}/{self.typed[k]}" for k in sorted(self.typed) if k != "unparsed"
        )
        return (
            f"corpus {self.engine}: {self.files} files, {self.lines} lines; "
            f"kind {self.kind_pct:.1f}% ({self.kind_ok}/{self.kind_n}), "
            f"fields {self.field_pct:.1f}% ({self.field_ok}/{self.field_n}), "
            f"wrong kind {len(self.wrong_kind)} (precision per kind typed: {precision})"
        )


def _digits(value: object) -> str:
    return re.sub(r"\D", "", str(value))


def same(name: str, want: object, got: object) -> bool:
    """Whether a label value and an event value agree (the shared scorer's comparison)."""
    if got is None or (isinstance(got, float) and math.isnan(got)):
        return want is None
    if name == "ts":
        return bool(_digits(want)) and _digits(want) in _digits(got)
    if isinstance(want, bool) or isinstance(got, bool):
        return str(want).lower() == str(got).lower()
    if isinstance(want, (int, float)):
        try:
            number = float(got)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return math.isclose(float(want), number, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(want, list):
        items = list(got) if isinstance(got, (list, tuple)) else None
        return items is not None and len(items) == len(want) and all(same("", a, b) for a, b in zip(want, items))
    if name == "mode":
        return str(want).lower() in str(got).lower() or str(got).lower() in str(want).lower()
    return str(want) == str(got)


def load_labels(corpus: Path) -> dict[str, dict[int, dict[str, Any]]]:
    """Per file, the label of each listed line (lines not listed are `unparsed`)."""
    labels: dict[str, dict[int, dict[str, Any]]] = {}
    for text in (corpus / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(text)
        per_file = labels.setdefault(str(obj["file"]), {})
        if "line_no" in obj:
            per_file[int(obj["line_no"])] = obj
    return labels


def events_by_line(log: Path, engine: str) -> dict[int, tuple[str, dict[str, Any]]]:
    """The kind and row of every event of one ingested log, by line number."""
    import logparse

    result = logparse.ingest(log, engine=engine)
    events: dict[int, tuple[str, dict[str, Any]]] = {}
    for kind, frame in result.frames().items():
        for row in frame.iter_rows(named=True):
            events[int(row["line_no"])] = (kind, row)
    return events


def score(corpus: Path, engine: str | None = None, *, fields: bool = True) -> Score:
    """Ingest every excerpt of `corpus` and compare it with its labels."""
    engine = engine or corpus.resolve().name
    labels = load_labels(corpus)
    result = Score(engine)
    for log in sorted(corpus.glob("*.log")):
        lines = log.read_text(encoding="utf-8", errors="replace").split("\n")
        events = events_by_line(log, engine)
        file_labels = labels.get(log.name, {})
        result.files += 1
        result.lines += len(events)
        for line_no, (got_kind, row) in sorted(events.items()):
            result.typed[got_kind] += 1
            label = file_labels.get(line_no, {"kind": "unparsed"})
            want_kind = str(label["kind"])
            text = lines[line_no - 1] if line_no <= len(lines) else ""
            if got_kind not in (want_kind, "unparsed"):
                result.wrong_kind.append(Miss(log.name, line_no, "kind", want_kind, got_kind, text))
            if label.get("truncated"):
                continue
            if want_kind == "unparsed":
                # an unparsed line may be labelled with its envelope (stamp, level, rank) to score
                if got_kind == "unparsed" and fields:
                    _score_fields(result, log.name, line_no, label, row, text)
                continue
            result.kind_n += 1
            if got_kind != want_kind:
                result.kind_misses.append(Miss(log.name, line_no, "kind", want_kind, got_kind, text))
            else:
                result.kind_ok += 1
            if fields:
                _score_fields(result, log.name, line_no, label, row if got_kind == want_kind else None, text)
    return result


def _score_fields(
    result: Score, name: str, line_no: int, label: dict[str, Any], row: dict[str, Any] | None, text: str
) -> None:
    """Every value of a label against the event's row (None: the line was typed as another kind)."""
    for field_name in sorted(set(label) - META):
        result.field_n += 1
        got = None if row is None else row.get(field_name)
        if row is not None and same(field_name, label[field_name], got):
            result.field_ok += 1
        else:
            result.field_misses.append(Miss(name, line_no, field_name, label[field_name], got, text))


def main() -> int:
    """Print a corpus folder's score; `-v` lists every miss, wrong kinds first."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--engine", help="engine name (default: the folder's name)")
    parser.add_argument("--kinds-only", action="store_true", help="score kinds and precision, not fields")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    args = parser.parse_args()
    result = score(args.corpus, args.engine, fields=not args.kinds_only)
    if args.verbose:
        for title, misses in (
            ("typed as a kind the label does not have", result.wrong_kind),
            ("labelled lines not typed as their kind", result.kind_misses),
            ("field values that differ", result.field_misses),
        ):
            if misses:
                print(f"-- {title} ({len(misses)})")
                print("\n".join(map(str, misses)))
    print(result.summary())
    return 1 if result.wrong_kind else 0


if __name__ == "__main__":
    sys.exit(main())
