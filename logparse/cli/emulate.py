"""`logparse emulate`: write a synthetic engine log and its ground truth."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TypedDict

import click

from logparse.emulate.core import emulate
from logparse.emulate.eras import SGLANG_ERAS, VLLM_ERAS, Era
from logparse.emulate.params import PhaseParams, RunParams
from logparse.emulate.presets import PRESETS, preset, scenarios
from logparse.store import check_writable


class _Sizes(TypedDict, total=False):
    """The `PhaseParams` fields the command line can override."""

    concurrency: int
    input_len: int
    output_len: int


DEFAULT_PHASE = PhaseParams(concurrency=8, input_len=4096, output_len=1024, decode_tps=25.0)


def build_params(
    engine: str,
    era: str | None,
    preset_name: str | None,
    concurrency: int | None,
    input_len: int | None,
    output_len: int | None,
    seed: int | None,
) -> RunParams:
    """Parameters from a preset (or a default one-phase run) with the command-line overrides applied."""
    if preset_name:
        params = preset(preset_name, engine)
    else:
        params = RunParams(engine=engine, phases=(DEFAULT_PHASE,))  # type: ignore[arg-type]
    overrides: _Sizes = {}
    if concurrency is not None:
        overrides["concurrency"] = concurrency
    if input_len is not None:
        overrides["input_len"] = input_len
    if output_len is not None:
        overrides["output_len"] = output_len
    phases = tuple(replace(p, **overrides) for p in params.phases)
    return replace(
        params,
        phases=phases,
        era=era if era is not None else params.era,
        seed=seed if seed is not None else params.seed,
    )


def _era_help() -> str:
    """The eras each engine renders, newest last, with the releases each covers."""

    def names(eras: tuple[Era, ...]) -> str:
        spans = {e.name: e.first if e.first == e.last else f"{e.first}..{e.last}" for e in eras}
        return ", ".join(name if span == name else f"{name} ({span})" for name, span in spans.items())

    return (
        f"Era, or a release it covers: vLLM {names(VLLM_ERAS)}; SGLang {names(SGLANG_ERAS)}. "
        f"[default: the preset's, else the newest: vLLM {VLLM_ERAS[-1].name}, "
        f"SGLang {SGLANG_ERAS[-1].name}]"
    )


def _preset_help() -> str:
    """The preset names, the scenarios listed under the engine they are for."""
    by_engine: dict[str, list[str]] = {"vllm": [], "sglang": []}
    for key in scenarios():
        engine, name = key.split("/", 1)
        by_engine.setdefault(engine, []).append(name)
    return (
        f"Named run: {', '.join(PRESETS)} (either engine); vLLM: {', '.join(by_engine['vllm'])}; "
        f"SGLang: {', '.join(by_engine['sglang'])}. [default: none, one phase of "
        f"N={DEFAULT_PHASE.concurrency}, {DEFAULT_PHASE.input_len} prompt and {DEFAULT_PHASE.output_len} "
        "output tokens]"
    )


@click.command("emulate", short_help="Render a synthetic engine log.")
@click.option("--engine", type=click.Choice(["vllm", "sglang"]), required=True, help="Engine to emulate.")
@click.option("--era", metavar="ERA", help=_era_help())
@click.option("--preset", "preset_name", metavar="NAME", help=_preset_help())
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    help=f"Requests per phase (N). [default: the preset's, else {DEFAULT_PHASE.concurrency}]",
)
@click.option(
    "--input-len",
    type=click.IntRange(min=1),
    help=f"Prompt tokens per request. [default: the preset's, else {DEFAULT_PHASE.input_len}]",
)
@click.option(
    "--output-len",
    type=click.IntRange(min=2),
    help=f"Output tokens per request. [default: the preset's, else {DEFAULT_PHASE.output_len}]",
)
@click.option(
    "--seed",
    type=int,
    help=f"Noise seed (runs are deterministic per seed). [default: the preset's, else {RunParams().seed}]",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Log file. [default: stdout]"
)
@click.option(
    "--truth",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the ground truth JSON here. [default: not written]",
)
def emulate_command(
    engine: str,
    era: str | None,
    preset_name: str | None,
    concurrency: int | None,
    input_len: int | None,
    output_len: int | None,
    seed: int | None,
    output: Path | None,
    truth: Path | None,
) -> None:
    """Render a vLLM or SGLang log with exact per-era line formats, plus its ground truth."""
    for path in (output, truth):
        if path is not None:
            check_writable(path, file=True)  # neither file is written when the other cannot be
    try:
        params = build_params(engine, era, preset_name, concurrency, input_len, output_len, seed)
        run = emulate(params)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if output is None:
        sys.stdout.write(run.text)
        if truth is not None:
            run.write_truth(truth)
        return
    run.write(output, truth)
    click.echo(f"wrote {output} ({len(run.lines)} lines)" + (f" and {truth}" if truth else ""), err=True)
