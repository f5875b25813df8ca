"""Engine-version eras: which line shapes a given vLLM or SGLang release prints.

Each era is a span of releases over which every line family the emulator renders keeps one
format. The flags name the doc section they come from (`vllm-log-formats.md` §N /
`sglang-log-formats.md` §N), so a new era is a new row here, not new code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Version = tuple[int, ...]


def parse_version(text: str) -> Version:
    """Parse `0.11.2`, `v0.5.4.post2` or `0.26` into a comparable tuple (`.postN` adds a 4th part)."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.post(\d+))?", text.strip())
    if match is None:
        msg = f"not a version: {text!r} (expected e.g. 0.11.2 or 0.5.4.post2)"
        raise ValueError(msg)
    major, minor, patch, post = match.groups()
    return (int(major), int(minor), int(patch or 0), int(post or 0))


@dataclass(frozen=True, slots=True)
class VllmEra:
    """Line shapes of one span of vLLM releases (see `vllm-log-formats.md`)."""

    name: str
    version: str  # canonical release rendered for this era
    first: str
    last: str
    v1: bool  # §0 engine eras
    brackets: bool  # §1.1 `[file:line]` from 0.8.0
    prefix_mode: Literal["wrap", "formatter"]  # §1.3 stdout wrapping (≤0.30) or formatter (0.31+)
    ansi_prefix_always: bool  # §1.4 bold-cyan prefix even in files (0.4.2..0.11.x)
    core_label: str | None  # §1.3 EngineCore_DP0 (0.10.2..0.17) / EngineCore (0.18+)
    info_once_rank0: bool  # §12 note: info_once scope `local` from 0.19
    info_once_exists: bool  # info_once/warning_once from 0.11.2 (before: plain info per rank)
    stats_preemptions: bool  # §2.3 `Preemptions: %d` part (0.11.2+)
    idle_flag: bool  # §2.3 0.11.2+ idle suppression by the engine_is_idle flag
    kv_size: Literal["v0", "separate", "device"]  # §4.2
    model_loading: Literal["v0", "gib_and", "gib_memory", "format_gib_memory"]  # §5
    available_kv: Literal["v0", "f2", "format_gib"]  # §4.3
    compile_words: Literal["takes_dynamic", "took_range"]  # §7
    init_unit: Literal["seconds", "s"]  # §8 init engine took ... seconds (≤0.19) / s (0.20+)
    server_start: Literal["v0", "api_server_n", "server_on"]  # §8
    version_line: Literal["api_server", "logo"]  # §9.1
    logo_file: str
    args_file: str
    free_memory_line: bool  # §4.3 `Free memory on device ...` at INFO (0.26+)
    fp8_warning: Literal["v0", "v1_old", "v1_new"]  # §12
    supported_tasks: Literal["none", "underscore", "space"]  # §8
    spec_format: Literal["v0", "v1"]  # §3.1 / §3.2 (0.10.2+ layout)
    stats_interval_s: float  # §2.1 local interval 5 s (V0) / §2.3 VLLM_LOG_STATS_INTERVAL 10 s
    aggregate_logging: bool  # §2.3 part 0 `{N} Engines Aggregated: ` (0.11.2+)


VLLM_ERAS: tuple[VllmEra, ...] = (
    VllmEra(
        name="0.6",
        version="0.6.6",
        first="0.6.5",
        last="0.6.6",
        v1=False,
        brackets=False,
        prefix_mode="wrap",
        ansi_prefix_always=True,
        core_label=None,
        info_once_rank0=False,
        info_once_exists=False,
        stats_preemptions=False,
        idle_flag=False,
        kv_size="v0",
        model_loading="v0",
        available_kv="v0",
        compile_words="takes_dynamic",
        init_unit="seconds",
        server_start="v0",
        version_line="api_server",
        logo_file="",
        args_file="",
        free_memory_line=False,
        fp8_warning="v0",
        supported_tasks="none",
        spec_format="v0",
        stats_interval_s=5.0,
        aggregate_logging=False,
    ),
    VllmEra(
        name="0.10",
        version="0.10.2",
        first="0.10.2",
        last="0.11.0",
        v1=True,
        brackets=True,
        prefix_mode="wrap",
        ansi_prefix_always=True,
        core_label="EngineCore_DP0",
        info_once_rank0=False,
        info_once_exists=False,
        stats_preemptions=False,
        idle_flag=False,
        kv_size="separate",
        model_loading="gib_and",
        available_kv="f2",
        compile_words="takes_dynamic",
        init_unit="seconds",
        server_start="api_server_n",
        version_line="api_server",
        logo_file="",
        args_file="utils.py",
        free_memory_line=False,
        fp8_warning="v1_old",
        supported_tasks="underscore",
        spec_format="v1",
        stats_interval_s=10.0,
        aggregate_logging=False,
    ),
    VllmEra(
        name="0.11",
        version="0.11.2",
        first="0.11.2",
        last="0.11.2",
        v1=True,
        brackets=True,
        prefix_mode="wrap",
        ansi_prefix_always=True,
        core_label="EngineCore_DP0",
        info_once_rank0=False,
        info_once_exists=True,
        stats_preemptions=True,
        idle_flag=True,
        kv_size="separate",
        model_loading="gib_memory",
        available_kv="f2",
        compile_words="takes_dynamic",
        init_unit="seconds",
        server_start="api_server_n",
        version_line="api_server",
        logo_file="",
        args_file="utils.py",
        free_memory_line=False,
        fp8_warning="v1_new",
        supported_tasks="space",
        spec_format="v1",
        stats_interval_s=10.0,
        aggregate_logging=True,
    ),
    VllmEra(
        name="0.26",
        version="0.26.0",
        first="0.26.0",
        last="0.27.0",
        v1=True,
        brackets=True,
        prefix_mode="wrap",
        ansi_prefix_always=False,
        core_label="EngineCore",
        info_once_rank0=True,
        info_once_exists=True,
        stats_preemptions=True,
        idle_flag=True,
        kv_size="separate",
        model_loading="format_gib_memory",
        available_kv="format_gib",
        compile_words="took_range",
        init_unit="s",
        server_start="server_on",
        version_line="logo",
        logo_file="api_utils.py",
        args_file="api_utils.py",
        free_memory_line=True,
        fp8_warning="v1_new",
        supported_tasks="space",
        spec_format="v1",
        stats_interval_s=10.0,
        aggregate_logging=True,
    ),
    VllmEra(
        name="0.31",
        version="0.31.0",
        first="0.31.0",
        last="0.31.0",
        v1=True,
        brackets=True,
        prefix_mode="formatter",
        ansi_prefix_always=False,
        core_label="EngineCore",
        info_once_rank0=True,
        info_once_exists=True,
        stats_preemptions=True,
        idle_flag=True,
        kv_size="device",
        model_loading="format_gib_memory",
        available_kv="format_gib",
        compile_words="took_range",
        init_unit="s",
        server_start="server_on",
        version_line="logo",
        logo_file="api_utils.py",
        args_file="api_utils.py",
        free_memory_line=True,
        fp8_warning="v1_new",
        supported_tasks="space",
        spec_format="v1",
        stats_interval_s=10.0,
        aggregate_logging=True,
    ),
)


@dataclass(frozen=True, slots=True)
class SglangEra:
    """Line shapes of one span of SGLang releases (see `sglang-log-formats.md`)."""

    name: str
    version: str
    first: str
    last: str
    prefill: Literal["P5", "P11", "P14"]  # §2.1
    decode: Literal["D7", "D13", "D14"]  # §3.1
    accept_rate: Literal["none", "with_bonus", "drafts_only"]  # §4 (meaning changed 2026-04-28)
    kv_line: Literal["plain", "dtype_line", "dtype_inline"]  # §5.1
    load_end: Literal["dtype", "elapsed_quant"]  # §6
    dist_end: Literal["mem", "elapsed_mem"]  # §5.6
    capture: Literal["legacy", "role_phase"]  # §7
    capture_bar_bs: bool  # §7 tqdm `Capturing batches (bs=...)` from 0.4.8.post1
    retract: Literal["ratio", "tokens_gained"]  # §10.1
    flashinfer_logs: bool  # §8 FlashInfer logger set to ERROR from 2026-05-09
    hybrid_ssm: bool  # §3 D11+/§5.2 Mamba pool lines exist
    reduced_running_line: bool  # §5.5 `max_running_requests was reduced ...` (2026+)


SGLANG_ERAS: tuple[SglangEra, ...] = (
    SglangEra(
        name="0.4",
        version="0.4.8",
        first="0.4.7.post1",
        last="0.4.8",
        prefill="P5",
        decode="D7",
        accept_rate="none",
        kv_line="plain",
        load_end="dtype",
        dist_end="mem",
        capture="legacy",
        capture_bar_bs=False,
        retract="ratio",
        flashinfer_logs=True,
        hybrid_ssm=False,
        reduced_running_line=False,
    ),
    SglangEra(
        name="0.5.6",
        version="0.5.6",
        first="0.5.4.post2",
        last="0.5.6.post2",
        prefill="P11",
        decode="D13",
        accept_rate="with_bonus",
        kv_line="dtype_line",
        load_end="dtype",
        dist_end="mem",
        capture="legacy",
        capture_bar_bs=True,
        retract="ratio",
        flashinfer_logs=True,
        hybrid_ssm=True,
        reduced_running_line=False,
    ),
    SglangEra(
        name="0.5.14",
        version="0.5.14",
        first="0.5.14",
        last="0.5.14",
        prefill="P14",
        decode="D14",
        accept_rate="drafts_only",
        kv_line="dtype_inline",
        load_end="elapsed_quant",
        dist_end="elapsed_mem",
        capture="role_phase",
        capture_bar_bs=True,
        retract="tokens_gained",
        flashinfer_logs=False,
        hybrid_ssm=True,
        reduced_running_line=True,
    ),
)

Era = VllmEra | SglangEra


def resolve_era(engine: str, era: str | None) -> Era:
    """Return the era for `engine` named by `era` (an era name or a release in its span).

    `None` picks the newest era. Raises `ValueError` naming the supported eras otherwise.
    """
    if engine not in ("vllm", "sglang"):
        msg = f"unknown engine {engine!r} (expected vllm or sglang)"
        raise ValueError(msg)
    eras: tuple[Era, ...] = VLLM_ERAS if engine == "vllm" else SGLANG_ERAS
    if era is None:
        return eras[-1]
    for candidate in eras:
        if era == candidate.name:
            return candidate
    spans = ", ".join(f"{e.name} ({e.first}..{e.last})" for e in eras)
    try:
        wanted = parse_version(era)
    except ValueError:
        wanted = None
    for candidate in eras:
        if wanted and parse_version(candidate.first) <= wanted <= parse_version(candidate.last):
            return candidate
    msg = f"{engine} era {era!r} is not emulated; supported: {spans}"
    raise ValueError(msg)
