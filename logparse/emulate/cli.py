"""`logparse emulate`: write a synthetic engine log and its ground truth."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from logparse.emulate.core import emulate
from logparse.emulate.params import PhaseParams, RunParams
from logparse.emulate.presets import preset

DEFAULT_PHASE = PhaseParams(concurrency=8, input_len=4096, output_len=1024, decode_tps=25.0)


def build_params(engine: str, era: str | None, preset_name: str | None, concurrency: int | None,
                 input_len: int | None, output_len: int | None, seed: int | None) -> RunParams:
    """Parameters from a preset (or a default one-phase run) with the command-line overrides applied."""
    if preset_name:
        params = preset(preset_name, engine)
    else:
        params = RunParams(engine=engine, phases=(DEFAULT_PHASE,))  # type: ignore[arg-type]
    overrides = {k: v for k, v in (("concurrency", concurrency), ("input_len", input_len),
                                   ("output_len", output_len)) if v is not None}
    phases = tuple(replace(p, **overrides) for p in params.phases)
    return replace(params, phases=phases, era=era if era is not None else params.era,
                   seed=seed if seed is not None else params.seed)


@click.command("emulate", short_help="Render a synthetic engine log.")
@click.option("--engine", type=click.Choice(["vllm", "sglang"]), required=True, help="Engine to emulate.")
@click.option("--era", help="Era or release: vLLM 0.6.6, 0.10.2, 0.11.2, 0.26, 0.31; "
                             "SGLang 0.4.8, 0.5.6, 0.5.14.")
@click.option("--preset", "preset_name", help="gpustack-64k, gpustack-200k, or a scenario name.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests per phase (N).")
@click.option("--input-len", type=click.IntRange(min=1), help="Prompt tokens per request.")
@click.option("--output-len", type=click.IntRange(min=2), help="Output tokens per request.")
@click.option("--seed", type=int, help="Noise seed (runs are deterministic per seed).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Log file (default stdout).")
@click.option("--truth", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the ground truth JSON here.")
def emulate_command(engine: str, era: str | None, preset_name: str | None, concurrency: int | None,
                    input_len: int | None, output_len: int | None, seed: int | None, output: Path | None,
                    truth: Path | None) -> None:
    """Render a vLLM or SGLang log with exact per-era line formats, plus its ground truth."""
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
