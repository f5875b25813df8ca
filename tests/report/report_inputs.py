"""Shared inputs of the report tests: the GPUStack-mirror logs, a bench file, a built report.

Fixtures live here, not in a `conftest.py`: other test modules import the top-level
`tests/conftest.py` as `conftest`, and a second `conftest` module would shadow it. Test modules
import the fixtures they use; the objects are built once per session whichever module asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "fixtures" / "bench" / "openzeka_b300_kimi_k3_128x128.csv"
_BUILT: dict[str, Any] = {}


@pytest.fixture(scope="session")
def gpustack_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """fixtures/{vllm,sglang}/gpustack-{64k,200k}.log (emulated from the same preset if absent)."""
    from logparse.report.examples import fixture_logs

    if "logs" not in _BUILT:
        _BUILT["logs"] = fixture_logs(tmp_path_factory.mktemp("gpustack"))
    return _BUILT["logs"]  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def bench_file() -> Path:
    return BENCH


@pytest.fixture(scope="session")
def gpustack_report(
    gpustack_logs: list[Path], bench_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """The full report (logs + bench) without PNG/SVG files, built once."""
    from logparse.report import build_report

    if "report" not in _BUILT:
        out = tmp_path_factory.mktemp("report")
        _BUILT["report"] = build_report(gpustack_logs, [bench_file], out, images=False, progress=False)
    return _BUILT["report"]


SIX_LOGS = [
    ROOT / "fixtures" / "vllm" / "gpustack-64k.log",
    ROOT / "fixtures" / "vllm" / "gpustack-200k.log",
    ROOT / "fixtures" / "sglang" / "gpustack-64k.log",
    ROOT / "fixtures" / "sglang" / "gpustack-200k.log",
    ROOT / "fixtures" / "vllm" / "emulated-0.6-spec-two-phases.log",
    ROOT / "fixtures" / "sglang" / "emulated-0.5.6-hybrid-spec.log",
]
TWO_CLIENT_FILES = [BENCH, ROOT / "fixtures" / "bench" / "gpustack_vllm_kimi_k3_200k_inflated.json"]


@pytest.fixture(scope="session")
def six_report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The report of issue 24's size case: 6 logs (4 GPUStack-mirror runs, 2 longer emulated runs
    of two phases each) and 2 client files, without PNG/SVG files, built once."""
    from logparse.report import build_report

    if "six" not in _BUILT:
        out = tmp_path_factory.mktemp("six")
        _BUILT["six"] = build_report(SIX_LOGS, TWO_CLIENT_FILES, out, images=False, progress=False)
    return _BUILT["six"]
