"""Regenerate the example report in `reports/` from the GPUStack-mirror fixtures.

    python -m logparse.report.examples [--out reports/gpustack-kimi-k3]

Inputs: `fixtures/{vllm,sglang}/gpustack-{64k,200k}.log` (emulated from the GPUStack Kimi-K3
8xB300 write-up; when a fixture is missing it is emulated afresh from the same preset, which is
deterministic) and the Openzeka client benchmark `fixtures/bench/openzeka_b300_kimi_k3_128x128.csv`.
PNGs are written at 1.25x (and recompressed) so the committed report stays small.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGS = [("vllm", "64k"), ("vllm", "200k"), ("sglang", "64k"), ("sglang", "200k")]
BENCH = ROOT / "fixtures" / "bench" / "openzeka_b300_kimi_k3_128x128.csv"
DEFAULT_OUT = ROOT / "reports" / "gpustack-kimi-k3"
PNG_SCALE = 1.25
TITLE = "Kimi-K3 on 8×B300: vLLM vs SGLang at 64K and 200K (GPUStack mirror) + Openzeka client benchmark"


def fixture_logs(work: Path) -> list[Path]:
    """The four GPUStack-mirror logs: the committed fixtures, else emulated into `work`."""
    paths = []
    for engine, context in LOGS:
        path = ROOT / "fixtures" / engine / f"gpustack-{context}.log"
        if not path.exists():
            from logparse.emulate.core import emulate
            from logparse.emulate.presets import gpustack

            path = work / engine / f"gpustack-{context}.log"
            emulate(gpustack(engine, context)).write(path)
        paths.append(path)
    return paths


def _shown(path: Path) -> Path:
    """`path` relative to the working directory when inside it (the page shows input paths)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def main(argv: list[str] | None = None) -> int:
    """Build the example report; print where it went and its size."""
    from logparse.report.build import build_report

    parser = argparse.ArgumentParser(description="Regenerate the example report in reports/.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        logs = [_shown(p) for p in fixture_logs(Path(tmp))]
        report = build_report(logs, [_shown(BENCH)], args.out, title=TITLE, png_scale=PNG_SCALE)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{report.index}: {len(report.charts)} charts, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
