"""Parse one block of lines: the high-volume lines vectorised, every other line by `LineParser`.

A block arrives as a polars column of lines (`lines_from_bytes`). Lines that need the reference
treatment go to `LineParser.parse` one by one: non-ASCII or invalid UTF-8, control characters
(`\\r` redraws, NUL...), caret-notation escapes, Ray's `[repeated Nx]`, over-long lines, lines no
fast envelope takes, and lines of a fast envelope that no fast rule reads. ANSI colour codes are
removed vectorised first (the same pattern `strip_ansi` applies).

Every line still gives exactly one event; the result is one DataFrame per kind (the columns of
`kind_schema` but `time`) plus the `ts` of every line, from which the caller derives `time`.
"""
from __future__ import annotations

import io
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from logparse.grammar import Grammar
from logparse.parse import ANSI_RE, MATCH_LIMIT, LineParser, convert
from logparse.reader import ReadStats, _decode
from logparse.tables import kind_schema
from logparse.fastpath.convert import BOOL_MAP, NUMBER_RE_RUST, POLARS_TYPES, python_values
from logparse.fastpath.plan import MATCHED, EnginePlan, RulePlan
from logparse.fastpath.profile import stage
from logparse.fastpath.translate import literal_pattern, translate

ANSI_RUST = translate(ANSI_RE.pattern).pattern
# The one part of ANSI_RE without ESC: a colour code whose ESC byte was lost ("[1;36m").
BARE_ANSI = r"\[(?:[01];)?(?:3[0-7]|9[0-7]|0|1|0;0)m"
# Bytes that send a line to the reference path (ESC is handled: colour codes are stripped).
_PLAIN = bytes(range(32, 127)) + b"\t\n\x1b"
# gzip, zlib and zstd magic numbers: polars reads such bytes as compressed data
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"x\x01", b"x^", b"x\x9c", b"x\xda", b"\x28\xb5\x2f\xfd")
SAMPLE_LINES = 256  # lines at each end of a block that choose which optional parts a rule keeps
_SEPARATORS = [bytes([b]) for b in (1, 2, 3, 4, 5, 6, 7, 8, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31)]


@dataclass
class ChunkContext:
    """What stays the same from block to block of one log."""

    grammar: Grammar
    engine: str
    parser: LineParser
    plan: EnginePlan | None
    stats: ReadStats
    schemas: dict[str, dict[str, pl.DataType]] = field(default_factory=dict)
    slow_rules: Counter[str] = field(default_factory=Counter)
    nulls: dict[int, tuple[str, ...]] = field(default_factory=dict)  # see `ChunkResult.nulls`

    def schema(self, kind: str) -> dict[str, pl.DataType]:
        """The columns of a kind's table without `time`."""
        found = self.schemas.get(kind)
        if found is None:
            found = {k: v for k, v in kind_schema(self.grammar, kind).items() if k != "time"}
            self.schemas[kind] = found
        return found


@dataclass
class ChunkResult:
    """The events of one block: a frame per kind (no `time`), and the `ts` of every line.

    `nulls` names, per line number, the fields its event holds with the value None (a rule
    captured the text but it did not convert). A table cannot tell those from the fields the
    event lacks (an optional group that did not take part), which are null too; the JSON lines
    of `--format jsonl` can (see `fastpath.jsonl`).
    """

    first_line: int
    frames: dict[str, pl.DataFrame]
    ts: pl.Series
    counts: Counter[str]
    fast_lines: int = 0
    nulls: dict[int, tuple[str, ...]] = field(default_factory=dict)


_COMMON = 8  # an event's first keys: kind, line_no, ts, engine, rank, pid, level, rule


def event_nulls(event: dict[str, Any]) -> tuple[str, ...]:
    """The fields (not the common keys) that `event` holds with the value None."""
    return tuple(k for k, v in itertools.islice(event.items(), _COMMON, None) if v is None)


def lines_from_bytes(data: bytes) -> pl.Series:
    """The lines of `data` (complete lines, each ended by `\\n`, the last one may lack it).

    Split as `reader.iter_lines` splits: on `\\n` only, one trailing `\\r` dropped. Non-UTF-8
    bytes become U+FFFD (such lines are then re-read from their bytes by the reference path).
    """
    if not data:
        return pl.Series("line", [], dtype=pl.String)
    for sep in _SEPARATORS:
        if sep not in data:
            break
    else:
        return _split_in_python(data)
    if data.startswith(_COMPRESSED_MAGIC):
        return _split_in_python(data)  # polars would take the block for a compressed stream
    frame = pl.read_csv(io.BytesIO(data), separator=sep.decode(), has_header=False, quote_char=None,
                        new_columns=["line"], schema={"line": pl.String}, empty_string_is_null=False,
                        raise_if_empty=False, encoding="utf8" if data.isascii() else "utf8-lossy",
                        comment_prefix=None, truncate_ragged_lines=False)
    lines = frame.to_series().fill_null("")
    if b"\r" in data and len(lines) != data.count(b"\n") + (0 if data.endswith(b"\n") else 1):
        return _split_in_python(data)
    return lines


def _split_in_python(data: bytes) -> pl.Series:
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    texts = [(p[:-1] if p.endswith(b"\r") else p).decode("utf-8", errors="replace") for p in parts]
    return pl.Series("line", texts, dtype=pl.String)


def block_is_plain(data: bytes) -> bool:
    """True when no line of `data` can need the reference treatment for its bytes alone."""
    return data.isascii() and not data.translate(None, _PLAIN)


def process_chunk(ctx: ChunkContext, data: bytes, first_line: int, lines: pl.Series | None = None) -> ChunkResult:
    """Events of the complete lines in `data` (the first one is line `first_line`)."""
    if lines is None:
        lines = lines_from_bytes(data)
    n = len(lines)
    counts: Counter[str] = Counter()
    if n == 0:
        return ChunkResult(first_line, {}, pl.Series("ts", [], dtype=pl.String), counts)
    with stage("line checks, colour codes"):
        slow_mask, texts, lengths, longest = _line_checks(data, lines)
    return _parse_block(ctx, data, first_line, lines, texts, slow_mask, lengths, longest, counts)


def _line_checks(data: bytes, lines: pl.Series) -> tuple[pl.Series | None, pl.Series, pl.Series, int]:
    """Lines that need the reference path, and the texts with colour codes removed."""
    plain = block_is_plain(data)
    lengths = lines.str.len_bytes()
    slow_mask: pl.Series | None = None
    if not plain:
        # non-ASCII (or invalid UTF-8, read as U+FFFD) and control characters other than tab/ESC
        odd = set(data.translate(None, _PLAIN))
        if not data.isascii():
            slow_mask = lengths != lines.str.len_chars()
        for byte in sorted(b for b in odd if b < 128):
            slow_mask = _or(slow_mask, lines.str.contains(chr(byte), literal=True))
    if b"^[[" in data:
        slow_mask = _or(slow_mask, lines.str.contains("^[[", literal=True))
    if b"across cluster]" in data:
        slow_mask = _or(slow_mask, lines.str.contains("across cluster]", literal=True))
    longest = lengths.max() or 0
    if longest > MATCH_LIMIT:
        slow_mask = _or(slow_mask, lengths > MATCH_LIMIT)
    # colour codes: removed as strip_ansi removes them (lines with "^[[" already go the slow way)
    texts = lines
    coloured = lines.str.contains(BARE_ANSI)
    if b"\x1b" in data:
        coloured = coloured | lines.str.contains("\x1b", literal=True)
    if coloured.any():
        idx = coloured.arg_true()
        texts = lines.clone().scatter(idx, lines.gather(idx).str.replace_all(ANSI_RUST, ""))
    return slow_mask, texts, lengths, longest


def _parse_block(ctx: ChunkContext, data: bytes, first_line: int, lines: pl.Series, texts: pl.Series,
                 slow_mask: pl.Series | None, lengths: pl.Series, longest: int,
                 counts: Counter[str]) -> ChunkResult:
    n = len(lines)
    frames: dict[str, list[pl.DataFrame]] = {}
    ts_parts: list[tuple[pl.Series, pl.Series]] = []  # (local index, ts)
    slow_parts: list[pl.Series] = []
    fast_count = 0
    if ctx.plan is not None and ctx.plan.envelopes:
        avail = pl.DataFrame({"i": pl.int_range(0, n, dtype=pl.UInt32, eager=True), "t": texts})
        if slow_mask is not None:
            slow_parts.append(avail.get_column("i").filter(slow_mask))
            avail = avail.filter(~slow_mask)
        for env in ctx.plan.envelopes:
            if avail.height == 0:
                break
            with stage("envelopes"):
                inside = avail.get_column("t").str.contains(env.prefix)
                if not inside.any():
                    continue
                pending = avail.filter(inside)
                avail = avail.filter(~inside)
                bad = None
                for pattern, literal in env.excludes:
                    bad = _or(bad, pending.get_column("t").str.contains(pattern, literal=literal))
                if env.strip:
                    t = pending.get_column("t")
                    bad = _or(bad, t.str.ends_with(" ") | t.str.ends_with("\t"))
                if bad is not None and bad.any():
                    slow_parts.append(pending.get_column("i").filter(bad))
                    pending = pending.filter(~bad)
            for rule in env.rules:
                if pending.height == 0:
                    break
                pending = _apply_rule(ctx, rule, pending, first_line, frames, ts_parts, slow_parts)
            slow_parts.append(pending.get_column("i"))
        slow_parts.append(avail.get_column("i"))
        fast_count = sum(len(idx) for idx, _ in ts_parts)
        counts.update({k: sum(f.height for f in v) for k, v in frames.items()})
        slow_idx = pl.concat(slow_parts).sort() if slow_parts else pl.Series("i", [], dtype=pl.UInt32)
    else:
        slow_idx = pl.int_range(0, n, dtype=pl.UInt32, eager=True)

    # -- the reference path --------------------------------------------------------------------
    with stage("reference path (LineParser)"):
        fast_longest = _reference_lines(ctx, data, first_line, lines, slow_idx, slow_mask, lengths, longest,
                                        frames, ts_parts, counts)
    stats = ctx.stats
    if fast_longest is not None and fast_longest > stats.longest_line:
        stats.longest_line = int(fast_longest)
    with stage("assembling blocks"):
        ts = pl.repeat(None, n, dtype=pl.String, eager=True).alias("ts")
        for idx, values in ts_parts:
            if len(idx):
                ts = ts.scatter(idx, values)
        out = {}
        for kind, parts in frames.items():
            frame = parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical")
            out[kind] = frame.sort("line_no") if len(parts) > 1 else frame
    return ChunkResult(first_line, out, ts, counts, fast_count, nulls=ctx.nulls)


def _reference_lines(ctx: ChunkContext, data: bytes, first_line: int, lines: pl.Series, slow_idx: pl.Series,
                     slow_mask: pl.Series | None, lengths: pl.Series, longest: int,
                     frames: dict[str, list[pl.DataFrame]], ts_parts: list[tuple[pl.Series, pl.Series]],
                     counts: Counter[str]) -> int | None:
    """Parse the lines `slow_idx` with `LineParser`; return the longest of the other lines."""
    stats = ctx.stats
    if len(slow_idx):
        if slow_mask is not None:
            fast_longest = lengths.filter(~slow_mask).max()
        else:
            fast_longest = longest
        raw_lines: list[bytes] | None = None
        bad_set: set[int] = set(slow_mask.arg_true().to_list()) if slow_mask is not None else set()
        if bad_set:
            raw_lines = data.split(b"\n")
        idx_list = slow_idx.to_list()
        texts_slow = lines.gather(slow_idx).to_list()
        rows: dict[str, list[dict[str, Any]]] = {}
        stamps: list[str | None] = []
        parse = ctx.parser.parse
        nulls = ctx.nulls
        for i, text in zip(idx_list, texts_slow):
            if i in bad_set:
                text = _decode(raw_lines[i], stats)  # type: ignore[index]
            event = parse(first_line + i, text)
            rows.setdefault(event["kind"], []).append(event)
            stamps.append(event["ts"])
            if event["rule"] is not None:
                ctx.slow_rules[event["rule"]] += 1
                missing = event_nulls(event)
                if missing:
                    nulls[first_line + i] = missing
        ts_parts.append((slow_idx, pl.Series("ts", stamps, dtype=pl.String)))
        for kind, kind_rows in rows.items():
            frames.setdefault(kind, []).append(pl.from_dicts(kind_rows, schema=ctx.schema(kind), strict=False))
            counts[kind] += len(kind_rows)
    else:
        fast_longest = longest
    return fast_longest


def _or(a: pl.Series | None, b: pl.Series) -> pl.Series:
    return b if a is None else (a | b)


def _apply_rule(ctx: ChunkContext, rule: RulePlan, pending: pl.DataFrame, first_line: int,
                frames: dict[str, list[pl.DataFrame]], ts_parts: list[tuple[pl.Series, pl.Series]],
                slow_parts: list[pl.Series]) -> pl.DataFrame:
    """Take the lines of `pending` that `rule` reads; return the lines still pending."""
    with stage("rule prefilters (anchors, exclusions)"):
        found = _candidates(rule, pending, slow_parts)
    if found is None:
        return pending
    cand, rest, parts = found
    left = [_claim(ctx, rule, part, pattern, first_line, frames, ts_parts, slow_parts)
            for part, pattern in parts if part.height]
    with stage("assembling blocks"):
        left = [f for f in left if f.height]
        if rest is not None:
            left.insert(0, rest)
        if not left:
            return cand.clear()
        return left[0] if len(left) == 1 else pl.concat(left, how="vertical")


def _candidates(rule: RulePlan, pending: pl.DataFrame, slow_parts: list[pl.Series]
                ) -> tuple[pl.DataFrame, pl.DataFrame | None, list[tuple[pl.DataFrame, str]]] | None:
    """The lines that may be the rule's (anchors, no earlier rule's anchor), with the pattern to try."""
    t = pending.get_column("t")
    has = None
    for anchor in rule.anchors:
        has = _and(has, t.str.contains(anchor, literal=True))
    if has is None:
        cand, rest = pending, None
    else:
        if not has.any():
            return None
        cand, rest = pending.filter(has), pending.filter(~has)
    if rule.exclude_anchors:
        hit = cand.get_column("t").str.contains(_any_literal(rule.exclude_anchors))
        if hit.any():
            slow_parts.append(cand.get_column("i").filter(hit))
            cand = cand.filter(~hit)
    if cand.height == 0:
        return cand, rest, []
    parts = [(cand, rule.pattern)]
    if rule.nodes:
        # leave out the optional parts whose literal the block's lines lack (exact: see Translation)
        t = cand.get_column("t")
        sample = "\n".join(t.head(SAMPLE_LINES).to_list() + t.tail(SAMPLE_LINES).to_list())
        skip = frozenset(nid for nid, key in rule.nodes if key not in sample)
        if skip:
            keys = sorted({key for nid, key in rule.nodes if nid in skip})
            risky = t.str.contains("|".join(literal_pattern(k) for k in keys))
            parts = [(cand.filter(~risky), rule.pattern_for(skip))]
            if risky.any():
                parts.append((cand.filter(risky), rule.pattern))
    return cand, rest, parts


def _claim(ctx: ChunkContext, rule: RulePlan, cand: pl.DataFrame, pattern: str, first_line: int,
           frames: dict[str, list[pl.DataFrame]], ts_parts: list[tuple[pl.Series, pl.Series]],
           slow_parts: list[pl.Series]) -> pl.DataFrame:
    """Read the lines of `cand` that `pattern` (the rule, maybe without absent parts) matches."""
    with stage("rule regexes (captures)"):
        got = cand.get_column("t").str.extract_groups(pattern).struct.unnest()
    take = got.get_column(MATCHED).is_not_null()
    level = got.get_column("e_level") if "e_level" in got.columns else None
    to_slow = None
    if level is not None:
        lv = level.fill_null("")
        if rule.exclude_by_level:
            for levels, anchors in rule.exclude_by_level:
                hit = lv.is_in(list(levels)) & cand.get_column("t").str.contains(_any_literal(anchors))
                to_slow = _or(to_slow, hit & take)
        if rule.blocked_levels:
            to_slow = _or(to_slow, lv.is_in(list(rule.blocked_levels)) & take)
        if rule.rule.levels is not None:
            take = take & lv.is_in(list(rule.rule.levels))
    elif rule.rule.levels is not None and "" not in rule.rule.levels:
        take = take & False  # no level on these lines: "" is in no level set
    if to_slow is not None and to_slow.any():
        slow_parts.append(cand.get_column("i").filter(to_slow))
        take = take & ~to_slow
        keep_pending = ~(take | to_slow)
    else:
        keep_pending = ~take
    if take.any():
        idx = cand.get_column("i").filter(take)
        with stage("typing the captures"):
            frame, ts = _rule_frame(ctx, rule, got.filter(take), idx, first_line)
        frames.setdefault(rule.kind, []).append(frame)
        ts_parts.append((idx, ts))
    return cand.filter(keep_pending)


_ANY_LITERAL: dict[tuple[str, ...], str] = {}


def _any_literal(literals: tuple[str, ...]) -> str:
    """A Rust pattern matching any of `literals` (cached: the same tuples come back every block)."""
    found = _ANY_LITERAL.get(literals)
    if found is None:
        found = _ANY_LITERAL[literals] = "|".join(literal_pattern(x) for x in literals)
    return found


def _and(a: pl.Series | None, b: pl.Series) -> pl.Series:
    return b if a is None else (a & b)


def _rule_frame(ctx: ChunkContext, rule: RulePlan, got: pl.DataFrame, idx: pl.Series,
                first_line: int) -> tuple[pl.DataFrame, pl.Series]:
    """The rows of `rule` for the matched lines: one query over the captures (see `convert`)."""
    schema = ctx.schema(rule.kind)
    present = set(got.columns)

    def first_of(names: list[str]) -> pl.Expr | None:
        found = [n for n in names if n in present]
        if not found:
            return None
        return pl.col(found[0]) if len(found) == 1 else pl.coalesce(found)

    exprs: dict[str, pl.Expr] = {}
    raws: dict[str, pl.Expr] = {}
    checks: dict[str, tuple[pl.Expr, str]] = {}  # column -> (raw text, type) to verify after the cast
    exprs["line_no"] = (pl.col(_IDX).cast(pl.Int64) + first_line)
    ts = first_of(["e_ts", "e_wrapper_ts"])
    exprs["ts"] = ts if ts is not None else pl.lit(None, dtype=pl.String)
    exprs["engine"] = pl.lit(ctx.engine, dtype=pl.String)
    rank = first_of(["e_rank", "e_wrapper_rank"])
    if rank is not None:
        exprs["rank"] = rank
    pid = first_of(["e_pid", "e_wrapper_pid"])
    if pid is not None:
        exprs["pid"] = pid.cast(pl.Int64, strict=False)
        checks["pid"] = (pid, "int")
    if "e_level" in present:
        exprs["level"] = pl.col("e_level")
    exprs["rule"] = pl.lit(rule.name, dtype=pl.String)
    constants = {name: _constant(value, schema.get(name, pl.String())) for name, value in rule.constants.items()}
    exprs.update(constants)
    for fplan in rule.fields:
        raw = first_of(list(reversed(fplan.groups)))  # duplicate names: the last group that captured
        if raw is None:
            continue
        raws[fplan.name] = raw
        conv = _cast(raw, fplan.typ)
        if fplan.typ in ("int", "float", "floats", "bool"):
            checks[fplan.name] = (raw, fplan.typ)
        if fplan.name in constants:
            dtype = schema.get(fplan.name, POLARS_TYPES[fplan.typ])
            conv = pl.when(raw.is_null()).then(constants[fplan.name].cast(dtype, strict=False)) \
                .otherwise(conv.cast(dtype, strict=False))
        exprs[fplan.name] = conv
    for name, parts in rule.templates.items():
        pieces: list[pl.Expr] = []
        for literal, ref in parts:
            if literal:
                pieces.append(pl.lit(literal))
            if ref is not None:
                piece = raws[ref]
                if ref in rule.constants:
                    piece = pl.when(piece.is_null()).then(pl.lit(str(rule.constants[ref]))).otherwise(piece)
                pieces.append(piece.fill_null(""))
        exprs[name] = pl.concat_str(pieces).str.strip_chars_end(": ") if pieces else pl.lit("")
    for name, (_, group, typ) in rule.derive.items():
        if group not in present:
            continue
        counted = pl.col(group).str.count_matches(NUMBER_RE_RUST).cast(pl.Int64)
        derived = {"int": counted, "float": counted.cast(pl.Float64), "str": counted.cast(pl.String)}.get(typ)
        if derived is None:
            raise ValueError(f"derive count into a {typ} field")  # kept off the fast path by the plan
        if name in exprs:
            derived = pl.when(pl.col(group).is_null()).then(exprs[name].cast(POLARS_TYPES[typ], strict=False)) \
                .otherwise(derived)
        exprs[name] = derived
    columns = [(exprs[name].cast(dtype, strict=False) if name in exprs else pl.lit(None, dtype=dtype)).alias(name)
               for name, dtype in schema.items()]
    failed = [_failed(exprs[name].cast(schema[name], strict=False), raw, typ).alias(f"__failed_{name}")
              for name, (raw, typ) in checks.items() if name in schema]
    frame = got.with_columns(idx.alias(_IDX)).lazy().select(*columns, *failed).collect()
    if failed:
        flags = frame.select(pl.col(f"__failed_{n}").any() for n in checks if n in schema).row(0)
        fields = {f.name for f in rule.fields}
        for name, flag in zip([n for n in checks if n in schema], flags):
            if flag:
                frame = _patch_column(frame, name, got, checks[name][0], checks[name][1])
                if name in fields:  # captured, yet None for the reference too: a field present as null
                    still_null = pl.col(f"__failed_{name}") & pl.col(name).is_null()
                    for line in frame.filter(still_null).get_column("line_no").to_list():
                        ctx.nulls[line] = (*ctx.nulls.get(line, ()), name)
        frame = frame.drop([f"__failed_{n}" for n in checks if n in schema])
    return frame, frame.get_column("ts")


_IDX = "i__"


def _constant(value: Any, dtype: pl.DataType) -> pl.Expr:
    """A rule's `set` value as `TableBuilder` converts it into a column of `dtype`."""
    return pl.lit(python_values([value], dtype)[0], dtype=dtype)


def _cast(raw: pl.Expr, typ: str) -> pl.Expr:
    if typ == "int":
        return raw.cast(pl.Int64, strict=False)
    if typ == "float":
        return raw.cast(pl.Float64, strict=False)
    if typ == "bool":
        return raw.str.strip_chars().str.to_lowercase().replace_strict(BOOL_MAP, default=None,
                                                                       return_dtype=pl.Boolean)
    if typ == "floats":
        return raw.str.extract_all(NUMBER_RE_RUST).list.eval(pl.element().cast(pl.Float64, strict=False))
    return raw


def _failed(converted: pl.Expr, raw: pl.Expr, typ: str) -> pl.Expr:
    """Rows where the cast could not read a text that the reference `convert` may still read."""
    if typ == "floats":
        found = raw.str.extract_all(NUMBER_RE_RUST)
        return (found.list.len() != converted.list.drop_nulls().list.len()).fill_null(False)
    return converted.is_null() & raw.is_not_null()


def _patch_column(frame: pl.DataFrame, name: str, got: pl.DataFrame, raw: pl.Expr, typ: str) -> pl.DataFrame:
    """Read the rows the cast failed on with the reference `convert` itself."""
    bad = frame.get_column(f"__failed_{name}")
    idx = bad.arg_true()
    texts = got.select(raw.alias("r")).to_series().gather(idx).to_list()
    column = frame.get_column(name).clone()
    fixed = python_values([convert(t, typ) for t in texts], column.dtype)  # type: ignore[arg-type]
    return frame.with_columns(column.scatter(idx, fixed))


__all__ = ["ANSI_RUST", "ChunkContext", "ChunkResult", "block_is_plain", "event_nulls", "lines_from_bytes",
           "process_chunk"]
