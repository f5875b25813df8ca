"""`emulate(params)`: render a parameterised run into log lines plus its ground truth."""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from logparse.emulate.eras import SglangEra, VllmEra
from logparse.emulate.noise import Noise
from logparse.emulate.params import RunParams, validate
from logparse.emulate.render import Wrapper, render
from logparse.emulate.sglang_build import SglangBuilder
from logparse.emulate.truth import sglang_truth, vllm_truth
from logparse.emulate.vllm_build import VllmBuilder
from logparse.store import output_file, write_file


@dataclass(frozen=True)
class EmulatedRun:
    """An emulated log (one string per physical line, no `\\n`) and its ground truth."""

    params: RunParams
    lines: list[str]
    truth: dict[str, Any]

    @property
    def text(self) -> str:
        """The log as written to a file (lines joined by `\\n`, final newline)."""
        return "\n".join(self.lines) + "\n"

    def write(self, log_path: Path, truth_path: Path | None = None) -> None:
        """Write the log (bytes exactly as rendered) and, if asked, the truth JSON: both whole, or
        neither (`logparse.store.output_file`)."""
        with ExitStack() as stack:  # both files are renamed into place once both are written
            handle = stack.enter_context(output_file(log_path))
            handle.write(self.text)
            handle.flush()
            if truth_path is not None:
                truth = stack.enter_context(output_file(truth_path))
                truth.write(self._truth_text())
                truth.flush()

    def write_truth(self, path: Path) -> None:
        """Write the ground truth as indented JSON."""
        write_file(path, self._truth_text())

    def _truth_text(self) -> str:
        return json.dumps(self.truth, indent=1) + "\n"


def emulate(params: RunParams) -> EmulatedRun:
    """Render `params` into an engine log and compute its ground truth (deterministic per seed)."""
    era = validate(params)
    _check_timing(params, era)
    noise = Noise(params.seed)
    start = datetime.fromisoformat(params.start)
    service = "vllm-1" if params.engine == "vllm" else "sglang-1"
    wrapper = Wrapper(params.style.wrapper, service)
    if isinstance(era, VllmEra):
        vbuilder = VllmBuilder(params, era, noise)
        vbuild = vbuilder.build()
        lines = render(vbuild.records, start, vbuilder.format, wrapper)
        body = vllm_truth(params, era, vbuild, start)
    else:
        sbuilder = SglangBuilder(params, era, noise)
        sbuild = sbuilder.build()
        lines = render(sbuild.records, start, sbuilder.format, wrapper)
        body = sglang_truth(params, era, sbuild, start)
    truth = {
        "engine": params.engine,
        "era": era.name,
        "version": era.version,
        "seed": params.seed,
        "start": start.isoformat(),
        "lines": len(lines),
        **body,
        "params": params.to_dict(),
    }
    return EmulatedRun(params, lines, truth)


def _check_timing(params: RunParams, era: VllmEra | SglangEra) -> None:
    s = params.startup
    if isinstance(era, VllmEra):
        need = (s.compile_s or 0.0) * 1.05 + s.cuda_graph_s + 3.0
        if s.init_s < need:
            msg = f"startup.init_s={s.init_s} cannot hold compile + CUDA graph capture (needs >= {need:.1f})"
            raise ValueError(msg)
    else:
        need = s.draft_load_s + s.cuda_graph_s * 1.05 + 0.01 * s.weight_load_s + 6.0
        if s.init_s < need:
            msg = f"startup.init_s={s.init_s} cannot hold draft load + graph capture (needs >= {need:.1f})"
            raise ValueError(msg)
