"""The vLLM line prefix: `(Name pid=N)` process labels, ANSI colour, `LEVEL ts [file:line]`."""

from __future__ import annotations

from datetime import datetime

from logparse.emulate.eras import VllmEra
from logparse.emulate.noise import Noise
from logparse.emulate.params import RunParams
from logparse.emulate.render import (
    ANSI_RESET,
    LEVEL_COLOURS,
    Record,
    flashinfer_line,
    uvicorn_access,
    vllm_ts,
)


class VllmFormatter:
    """Format records the way vLLM's logger and its stdout wrapper print them (§1)."""

    def __init__(self, params: RunParams, era: VllmEra, noise: Noise) -> None:
        self.params = params
        self.era = era
        self.noise = noise

    def pid(self, source: str) -> int:
        """The process id printed for a source (the API server is pid 1, as in a container).

        `core@d` / `w{r}@d` are the processes of vLLM DP engine d (no suffix: engine 0)."""
        if source == "api":
            return 1
        source, engine = _engine_of(source)
        if source == "core":
            return 200 + self.noise.integer("pid|core", 0, 80) + 1000 * engine
        return 300 + self.noise.integer("pid|w", 0, 80) + int(source[1:]) + 1000 * engine

    def label(self, source: str) -> str | None:
        """The `(Name pid=N)` label of a source in this era, or None when unprefixed."""
        era, p = self.era, self.params
        if source == "raw":
            return None
        if not era.v1:
            if source.startswith("w") and source != "w0":
                return "VllmWorkerProcess"
            return None
        if source == "api":
            return "APIServer"
        source, engine = _engine_of(source)
        if source == "core" or (source.startswith("w") and p.tp == 1):
            # §1.3: EngineCore_DP{n} (0.10.2..0.17 always; 0.18+ only with DP > 1)
            return era.core_label if p.dp == 1 else f"EngineCore_DP{engine}"
        if p.dp == 1 and p.ep_size == 1:
            return f"Worker_TP{source[1:]}"
        # §1.3: `Worker` + `_DP{n}` `_TP{n}` `_EP{n}`, each only when that size is > 1
        rank = int(source[1:])
        label = "Worker" + (f"_DP{engine}" if p.dp > 1 else "") + f"_TP{rank}"
        return label + (f"_EP{engine * p.tp + rank}" if p.ep_size > 1 else "")

    def prefix(self, source: str) -> str:
        """The process prefix written before a record of `source`."""
        label = self.label(source)
        if label is None:
            return ""
        pid_source = source
        if source.startswith("w") and self.params.tp == 1 and self.era.v1:
            pid_source = "core" + source[source.index("@") :] if "@" in source else "core"
        text = f"({label} pid={self.pid(pid_source)})"
        if self.era.ansi_prefix_always:
            return f"\x1b[1;36m{text}\x1b[0;0m "
        if self.params.style.color:
            return f"\x1b[0;36m{text}\x1b[0;0m "
        return f"{text} "

    def __call__(self, record: Record, when: datetime) -> list[str]:
        """Physical lines of one record (the vLLM formatter and the stdout wrapper)."""
        era, color = self.era, self.params.style.color
        prefix = self.prefix(record.source)
        record.ts = vllm_ts(when)
        if record.style == "engine":
            site = f"[{record.site}]" if era.brackets else f"{record.site}]"
            level, stamp = record.level, record.ts
            if color and era.v1 and not era.ansi_prefix_always:  # ColoredFormatter (0.12+)
                level = f"{LEVEL_COLOURS[level]}{level}{ANSI_RESET}"
                stamp, site = f"\x1b[90m{stamp}{ANSI_RESET}", f"\x1b[90m{site}{ANSI_RESET}"
            head = f"{prefix}{level} {stamp} {site} "
            parts = record.body.split("\n")
            return [head + part + ("\r" if i < len(parts) - 1 else "") for i, part in enumerate(parts)]
        wrap_prefix = prefix if era.prefix_mode == "wrap" else ""
        if record.style == "flashinfer":
            glued = record.meta.get("glued", "")
            text = flashinfer_line(when, record.level, record.site, record.body)
            return [wrap_prefix + (glued + text if glued else text)]
        if record.style == "uvicorn_access":
            client, method, path, status = record.body.split("|")
            return [wrap_prefix + uvicorn_access(client, method, path, status, color)]
        return [wrap_prefix + record.body]


def _engine_of(source: str) -> tuple[str, int]:
    """Split `core@2` / `w1@2` into the process kind and its DP engine (no `@`: engine 0)."""
    name, _, engine = source.partition("@")
    return name, int(engine or 0)
