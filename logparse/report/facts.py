"""The run facts of one log for the report header: engine, version, model, ranks, N, inputs."""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from logparse.analysis.evidence import mark_of
from logparse.analysis.identity import MODEL_COLUMNS, first_text
from logparse.report.frames import LogRun, rank_key, tokens_label


def _first(frame: pl.DataFrame | None, columns: tuple[str, ...]) -> str | None:
    return None if frame is None else first_text(frame, columns)


def run_facts(run: LogRun) -> dict[str, Any]:
    """Facts for the header row of one log (values are plain text, not yet escaped).

    Keys: ``log``, ``engine``, ``version``, ``model``, ``ranks``, ``concurrency``, ``inputs``
    (``~`` estimated, ``?`` guessed), ``phases``, ``starts`` (engine starts in the log), ``lines``,
    ``coverage``; from the analysis (`analysis.fleet.fleet_row`): ``start``, ``end`` and
    ``span_s`` of the load (first phase's start to last phase's end), ``kv_pool_tokens``,
    ``ready_s`` (cold start), ``weight_load_s``, ``oom``, ``oom_recovered``, ``preemptions``,
    ``retractions``, ``jit`` (JIT compiles) and ``runtime_jit`` (after ready or in a phase).
    """
    config = run.tables.get("config")
    a = run.analysis
    facts: dict[str, Any] = {"log": run.name, "engine": run.engine}
    facts["version"] = (a.version if a is not None and a.version else None) or _first(config, ("version",))
    facts["model"] = _first(config, MODEL_COLUMNS)
    facts["ranks"] = rank_summary(run)
    if a is not None and not a.phases.is_empty():
        ns = sorted({int(n) for n in a.phases.get_column("concurrency").drop_nulls().to_list()})
        facts["concurrency"] = ", ".join(str(n) for n in ns) or None
        inputs = []
        for row in a.phases.iter_rows(named=True):
            if row.get("input_tokens") is not None:
                label = mark_of(row.get("input_confidence")) + tokens_label(row["input_tokens"])
                if label not in inputs:
                    inputs.append(label)
        facts["inputs"] = ", ".join(inputs) or None
        facts["phases"] = a.phases.height
    else:
        facts["concurrency"] = facts["inputs"] = None
        facts["phases"] = 0
    facts["starts"] = a.segments.height if a is not None and a.segments.height else None
    total = sum(f.height for f in run.tables.values())
    unparsed = run.tables["unparsed"].height if "unparsed" in run.tables else 0
    facts["lines"] = total
    facts["coverage"] = (total - unparsed) / total if total else None
    facts.update(_analysed_facts(run))
    if facts["model"] is None and a is not None:
        facts["model"] = a.identity.get("model")
    return facts


def _analysed_facts(run: LogRun) -> dict[str, Any]:
    """The run card's figures that the analysis computes (span, KV pool, cold start, trouble)."""
    keys = ("start", "end", "span_s", "kv_pool_tokens", "ready_s", "oom", "preemptions", "retractions")
    out: dict[str, Any] = dict.fromkeys((*keys, "weight_load_s", "oom_recovered", "jit", "runtime_jit"))
    a = run.analysis
    if a is None:
        return out
    from logparse.analysis.fleet import fleet_row
    from logparse.analysis.summary import summary_dict

    row = fleet_row(run.name, summary_dict(a))
    out.update({k: row[k] for k in keys})
    out["weight_load_s"] = a.startup.get("weight_load_s")
    out["oom_recovered"] = a.counts.get("oom_recovered")
    out["jit"] = a.counts.get("jit_compiles")
    out["runtime_jit"] = a.counts.get("runtime_jit_compiles")
    return out


def rank_summary(run: LogRun) -> str | None:
    """How many GPU ranks printed lines, e.g. ``8 (TP0–TP7)``; None when no rank label shows one."""
    labels: set[str] = set()
    for frame in run.tables.values():
        if "rank" in frame.columns and frame.height:
            labels.update(r for r in frame.get_column("rank").drop_nulls().unique().to_list())
    gpu = sorted((r for r in labels if re.search(r"(?:TP|rank[ =]?)\d+", r)), key=rank_key)
    if gpu:
        return f"{len(gpu)} ({gpu[0]}–{gpu[-1]})" if len(gpu) > 1 else f"1 ({gpu[0]})"
    tp = _first(run.tables.get("config"), ("tensor_parallel_size", "tp_size"))
    return f"TP={tp}" if tp else None
