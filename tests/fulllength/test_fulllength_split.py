"""Property (issue 25): a sweep log cut at its phase boundaries, each part ingested alone, gives
the same windows as the whole log: a phase's window depends on that phase's lines only."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.analysis.analyze import Analysis, analyze_log
from tests.fulllength.corpus import server

pytestmark = pytest.mark.slow

LOGS = ["dgx-vllm.log", "dgx-sglang-int4.log", "k8s-lws-run-1.log.gz", "dgx-vllm-int4.log"]
_WHOLE: dict[str, tuple[list[str], Analysis]] = {}


def _whole(name: str) -> tuple[list[str], Analysis]:
    if name not in _WHOLE:
        path = server(name)
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        _WHOLE[name] = (raw.decode("utf-8").split("\n"), analyze_log(path, year=2026))
    return _WHOLE[name]


def _windows(a: Analysis, offset: int) -> list[tuple[int, int, int, float, bool]]:
    return [
        (w["first_line"] + offset, w["last_line"] + offset, w["samples"], round(w["gen_tps_mean"], 6), w["trusted"])
        for w in a.windows.iter_rows(named=True)
    ]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(LOGS), data=st.data())
def test_each_part_alone_gives_the_windows_of_its_phases(name: str, data: st.DataObject, tmp_path: Path) -> None:
    lines, whole = _whole(name)
    ends = whole.phases.get_column("last_line").to_list()[:-1]
    cuts = sorted(data.draw(st.sets(st.sampled_from(ends), min_size=1, max_size=min(4, len(ends)))))
    bounds = [0, *cuts, len(lines)]
    got = []
    for k, (start, stop) in enumerate(zip(bounds, bounds[1:], strict=False)):
        part = tmp_path / f"{name}.part{k}.log"
        part.write_text("\n".join(lines[start:stop]) + "\n", encoding="utf-8")
        got += _windows(analyze_log(part, year=2026), start)
    assert got == _windows(whole, 0)
