"""Regenerate the emulated fixtures: `python -m logparse.emulate.fixtures [--root .]`.

Writes `fixtures/{vllm,sglang}/gpustack-{64k,200k}.log` and the `emulated-<era>-<scenario>.log`
files, each with a `.truth.json` beside it. Output is byte-identical on every run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from logparse.emulate.core import emulate
from logparse.emulate.params import RunParams
from logparse.emulate.presets import gpustack, scenarios


def fixture_params() -> Iterator[tuple[str, RunParams]]:
    """Every emulated fixture as (`<engine>/<name>`, parameters)."""
    for engine in ("vllm", "sglang"):
        for context in ("64k", "200k"):
            yield f"{engine}/gpustack-{context}", gpustack(engine, context)
    yield from scenarios().items()


def write_fixtures(root: Path) -> list[Path]:
    """Render every fixture under `root/fixtures` and return the log paths written."""
    written = []
    for name, params in fixture_params():
        log = root / "fixtures" / f"{name}.log"
        emulate(params).write(log, log.with_suffix(".truth.json"))
        written.append(log)
    return written


@click.command()
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Project root holding fixtures/.",
)
def main(root: Path) -> None:
    """Regenerate the emulated fixtures deterministically."""
    for path in write_fixtures(root):
        click.echo(f"{path}  {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
