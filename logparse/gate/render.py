"""The gate's verdict as text, Markdown (a PR comment, `$GITHUB_STEP_SUMMARY`), JUnit XML and JSON."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from logparse.analysis.text import render_table
from logparse.escape import for_terminal
from logparse.gate.judge import Judgement
from logparse.gate.sides import Side

if TYPE_CHECKING:
    from logparse.gate import GateResult

MARK_LEGEND = {
    "~": "~ estimated (the figure is derived from other printed figures)",
    "?": "? guessed (an assumption the log does not confirm)",
    "≥": "≥ a lower bound (the ready line prints no time of its own)",
    "*": "* C_max judged on the optimistic P90 of per-user TPS (the file has no P10)",
}
HEADERS = ["metric", "baseline", "candidate", "change", "bound", "verdict"]


def value_text(j: Judgement, value: float | None) -> str:
    """A figure with its marks and unit: `~501.4 tok/s`, `-` when absent."""
    if value is None:
        return "-"
    m = j.metric
    text = f"{value:,.{m.digits}f}"
    return f"{j.mark}{text} {m.unit}".rstrip()


def change_text(j: Judgement) -> str:
    """`-15.0%`, `+2 (from 0)` for a count that was 0, `-` when not computed."""
    if j.change_pct is None or j.baseline is None or j.candidate is None:
        return "-"
    if math.isinf(j.change_pct):
        return f"{j.candidate - j.baseline:+,.{j.metric.digits}f} (from 0)"
    return f"{j.change_pct:+.1f}%"


def bound_text(j: Judgement) -> str:
    """`5% threshold`, `6.7% window cv`, `3.1% baseline spread`."""
    return f"{j.bound_pct:.3g}% {j.bound_source}"


def verdict_text(j: Judgement) -> str:
    """The verdict, upper case when it fails the gate."""
    return j.verdict.upper() if j.verdict in ("regressed", "missing") else j.verdict


def _sides_lines(result: GateResult) -> list[tuple[str, str]]:
    rows = [
        (
            "baseline" if len(result.baselines) == 1 else f"baseline {k}",
            f"{b.source} ({b.describe()})",
        )
        for k, b in enumerate(result.baselines, start=1)
    ]
    rows.append(("candidate", f"{result.candidate.source} ({result.candidate.describe()})"))
    return rows


def _notes(result: GateResult) -> list[str]:
    out = [f"{j.name}: {j.note}" for j in result.judgements if j.note]
    out += result.notes
    marks = {ch for j in result.judgements for ch in j.mark}
    out += [MARK_LEGEND[ch] for ch in MARK_LEGEND if ch in marks]
    if len(result.baselines) > 1:
        out.append(f"baseline: the median of the {len(result.baselines)} baseline runs")
    return out


def table_rows(result: GateResult) -> list[list[str]]:
    """The cells of the verdict table, one row per judgement."""
    return [
        [
            j.name,
            value_text(j, j.baseline),
            value_text(j, j.candidate),
            change_text(j),
            bound_text(j),
            verdict_text(j),
        ]
        for j in result.judgements
    ]


def render_text(result: GateResult) -> str:
    """The verdict for the terminal: the sides, the table, the notes, the verdict line."""
    width = max(len(k) for k, _ in _sides_lines(result))
    out = [for_terminal(f"{k:<{width}}  {v}") for k, v in _sides_lines(result)]
    if result.problems:
        out += ["", "not comparable:", *(for_terminal(f"  {p}") for p in result.problems)]
    if result.judgements:
        out += ["", render_table([[for_terminal(c) for c in r] for r in table_rows(result)], HEADERS)]
    notes = _notes(result)
    if notes:
        out += ["", *(for_terminal(n) for n in notes)]
    out += ["", for_terminal(f"gate: {result.summary()}")]
    return "\n".join(out)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: GateResult) -> str:
    """The verdict as GitHub-flavoured Markdown (a PR comment or `$GITHUB_STEP_SUMMARY`)."""
    out = [f"### logparse gate: {result.verdict}", ""]
    out += [f"- **{k}**: `{_md(v)}`" for k, v in _sides_lines(result)]
    if result.problems:
        out += ["", "**Not comparable:**", "", *(f"- {_md(p)}" for p in result.problems)]
    if result.judgements:
        out += ["", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * 3 + "---:|---:|---|"]
        for r in table_rows(result):
            r[-1] = f"**{r[-1]}**" if r[-1].isupper() else r[-1]
            out.append("| " + " | ".join(_md(c) for c in [f"`{r[0]}`", *r[1:]]) + " |")
    notes = _notes(result)
    if notes:
        out += ["", *(f"- {_md(n)}" for n in notes)]
    out += ["", f"**{_md(result.summary())}**", ""]
    return "\n".join(out)


def _failure_text(j: Judgement) -> str:
    return (
        f"{j.name} {j.verdict}: baseline {value_text(j, j.baseline)}, candidate "
        f"{value_text(j, j.candidate)}, change {change_text(j)}, bound {bound_text(j)}"
        + (f"; {j.note}" if j.note else "")
    )


def render_junit(result: GateResult) -> str:
    """The verdict as JUnit XML, the shape pytest's `--junitxml` writes: one test case per metric
    (a regression a `failure`, a missing metric an `error`, each carrying the numbers), and one
    `error` test case per reason the runs are not comparable."""
    cases: list[ET.Element] = []
    for k, problem in enumerate(result.problems, start=1):
        case = ET.Element("testcase", classname="logparse.gate", name=f"comparable[{k}]", time="0")
        ET.SubElement(case, "error", message=f"not comparable: {problem}").text = problem
        cases.append(case)
    for j in result.judgements:
        case = ET.Element("testcase", classname="logparse.gate", name=j.name, time="0")
        text = _failure_text(j)
        if j.verdict == "regressed":
            ET.SubElement(case, "failure", message=text).text = text
        elif j.verdict == "missing":
            ET.SubElement(case, "error", message=text).text = text
        else:
            ET.SubElement(case, "system-out").text = text
        cases.append(case)
    counts = {
        "errors": str(sum(c.find("error") is not None for c in cases)),
        "failures": str(sum(c.find("failure") is not None for c in cases)),
        "skipped": "0",
        "tests": str(len(cases)),
        "time": "0",
    }
    root = ET.Element("testsuites", name="logparse gate")
    suite = ET.SubElement(root, "testsuite", {"name": "logparse gate", **counts})
    props = ET.SubElement(suite, "properties")
    for role, described in _sides_lines(result):
        ET.SubElement(props, "property", name=role, value=described)
    ET.SubElement(props, "property", name="verdict", value=result.verdict)
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def side_dict(side: Side) -> dict[str, Any]:
    """A side's facts and scopes as plain data."""
    return {
        "source": side.source,
        "origin": side.origin,
        "engine": side.engine,
        "version": side.version,
        "model": side.model,
        "tensor_parallel": side.tensor_parallel,
        "data_parallel": side.data_parallel,
        "scopes": [
            {
                "key": s.key,
                "label": s.label,
                "input_tokens": s.input_tokens,
                "input_estimated": s.input_estimated,
                "concurrency": s.concurrency,
                "output_tokens": s.output_tokens,
                "output_estimated": s.output_estimated,
            }
            for s in side.scopes
        ],
    }


def judgement_dict(j: Judgement) -> dict[str, Any]:
    """One judgement as plain data (a change from 0 is null, with ``from_zero`` true)."""
    return {
        "name": j.name,
        "metric": j.metric.key,
        "label": j.metric.label,
        "unit": j.metric.unit,
        "better": j.metric.better,
        "scope": j.scope,
        "scope_label": j.scope_label,
        "baseline": j.baseline,
        "baselines": list(j.baselines),
        "candidate": j.candidate,
        "change_pct": _finite(j.change_pct),
        "from_zero": j.change_pct is not None and math.isinf(j.change_pct),
        "worse_pct": _finite(j.worse_pct),
        "threshold_pct": j.threshold_pct,
        "noise_pct": j.noise_pct,
        "noise_source": j.noise_source,
        "bound_pct": j.bound_pct,
        "bound_source": j.bound_source,
        "verdict": j.verdict,
        "mark": j.mark,
        "note": j.note,
    }


__all__ = [
    "judgement_dict",
    "render_junit",
    "render_markdown",
    "render_text",
    "side_dict",
    "table_rows",
]
