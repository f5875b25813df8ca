"""Every reader on its fixture, detection by content, and one malformed file per format."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from logparse.bench.readers import FORMATS, detect_format, load_bench, read_bench_file
from logparse.bench.schema import SCHEMA
from logparse.errors import InputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
SEED = Path(__file__).resolve().parents[3] / "shared" / "seed-data" / "openzeka_b300_kimi_k3_128x128.csv"

VALID = [
    ("vllm_bench_serve_c16.json", "vllm_bench_json", 1),
    ("gpustack_vllm_kimi_k3_200k_inflated.json", "vllm_bench_json", 1),
    ("vllm_bench_serve_summary.txt", "vllm_bench_summary", 2),
    ("sglang_bench_serving.jsonl", "sglang_bench_jsonl", 4),
    ("sglang_bench_serving_summary.txt", "sglang_bench_summary", 2),
    ("openzeka_b300_kimi_k3_128x128.csv", "cordatus_csv", 28),
    ("Kimi-K3-table.csv", "cordatus_csv", 4),
    ("aiperf_conc8_profile_export_aiperf.csv", "aiperf_csv", 1),
    ("genai_perf_concurrency4_profile_export_genai_perf.csv", "genai_perf_csv", 1),
    ("vllm_era1_benchmark_serving_c10.json", "vllm_bench_json", 1),
    ("vllm_era2_benchmark_serving.json", "vllm_bench_json", 1),
    ("vllm_era3_bench_serve_first.json", "vllm_bench_json", 1),
    ("vllm_era4_bench_serve_save_detailed.json", "vllm_bench_json", 1),
    ("vllm_era4_bench_serve_save_result.json", "vllm_bench_json", 1),
    ("vllm_era4_bench_serve_append_detailed.jsonl", "vllm_bench_json", 2),
    ("vllm_bench_serve_summary_p99_only.txt", "vllm_bench_summary", 1),
    ("sglang_bench_serving_output_details.jsonl", "sglang_bench_jsonl", 1),
]


def _one(name: str) -> pl.DataFrame:
    return load_bench([FIXTURES / name])


@pytest.mark.parametrize(("name", "tool", "runs"), VALID)
def test_bench_reader_fixture_detected_and_read(name: str, tool: str, runs: int) -> None:
    df = _one(name)
    assert df.schema == pl.Schema(SCHEMA)
    assert df.height == runs
    assert set(df["source_tool"]) == {tool}
    assert df["row"].to_list() == list(range(runs))
    assert df["ttft_ms_mean"].null_count() == 0


def test_bench_detection_uses_content_not_extension(tmp_path: Path) -> None:
    renamed = tmp_path / "results.txt"
    shutil.copy(FIXTURES / "vllm_bench_serve_c16.json", renamed)
    assert detect_format(renamed, renamed.read_text()).name == "vllm_bench_json"
    renamed_csv = tmp_path / "sweep.log"
    shutil.copy(FIXTURES / "aiperf_conc8_profile_export_aiperf.csv", renamed_csv)
    assert detect_format(renamed_csv, renamed_csv.read_text()).name == "aiperf_csv"


def test_bench_vllm_json_fields() -> None:
    rec = _one("vllm_bench_serve_c16.json").row(0, named=True)
    assert (rec["engine"], rec["mode"], rec["label"]) == ("vllm", "direct", "random-1024x128")
    assert rec["concurrency"] == 16
    assert rec["request_rate"] is None  # "inf" in the file
    assert rec["ttft_ms_p90"] == 322.5
    assert rec["latency_s_mean"] == pytest.approx(3.93847)  # mean_e2el_ms / 1000
    assert rec["output_len"] == pytest.approx(20480 / 160)
    assert rec["input_len"] == pytest.approx(163840 / 160)
    assert rec["itl_definition"] == "chunk_gap"
    # per-user TPS is not in the file: derived and marked as such
    assert rec["tps_per_user_mean"] == pytest.approx(128 / 3.93847)
    assert "tps_per_user_mean" in rec["derived"].split(",")


def test_bench_vllm_summary_blocks() -> None:
    df = _one("vllm_bench_serve_summary.txt")
    first, second = df.row(0, named=True), df.row(1, named=True)
    assert first["concurrency"] == 8  # printed inside the block
    assert second["concurrency"] == 32  # only in the preamble (older block without the line)
    assert first["failed"] == 0 and second["failed"] is None
    assert first["ttft_ms_p90"] == 190.25 and second["ttft_ms_p90"] is None
    assert first["latency_s_p99"] == pytest.approx(3.1057)
    assert first["duration_s"] == 29.90 and first["total_output_tokens"] == 10240
    # no E2EL section in the second block: latency derived from TTFT + (n - 1) x TPOT
    assert second["latency_s_mean"] == pytest.approx((402.75 + 127 * 31.12) / 1000)
    assert "latency_s_mean" in second["derived"].split(",")


def test_bench_sglang_jsonl_runs() -> None:
    df = _one("sglang_bench_serving.jsonl")
    assert df["mode"].to_list() == ["direct", "direct", "spec", "spec"]
    assert df["concurrency"].to_list() == [4, 16, 4, 16]
    assert set(df["engine"]) == {"sglang"} and set(df["label"]) == {"qwen3-32b"}
    assert df["output_len_requested"].to_list() == [256] * 4
    assert df["accept_length"].to_list()[2:] == [2.41, 1.35]
    first = df.row(0, named=True)
    assert first["latency_s_mean"] == pytest.approx((95.2 + 255 * 14.10) / 1000, abs=1e-5)
    assert first["mean_in_flight"] == pytest.approx(40 * first["latency_s_mean"] / 37.51, abs=0.01)


def test_bench_sglang_summary_blocks() -> None:
    df = _one("sglang_bench_serving_summary.txt")
    spec, old = df.row(0, named=True), df.row(1, named=True)
    assert spec["concurrency"] == 32 and old["concurrency"] == 8  # 'Max reqeuest concurrency' typo
    # `Backend: sglang-oai-chat` is the client's OpenAI chat protocol, which names no server;
    # `Backend: sglang` is SGLang's native /generate, which only an SGLang server answers
    assert (spec["engine"], spec["mode"], spec["accept_length"]) == (None, "spec", 2.12)
    assert old["engine"] == "sglang"
    assert spec["latency_s_p95"] == pytest.approx(11.133)
    assert spec["mean_in_flight"] == 31.37
    assert old["ttft_ms_p90"] is None and old["ttft_ms_p99"] == 320.80


def test_bench_openzeka_csv_maps_cordatus_definitions() -> None:
    df = _one("openzeka_b300_kimi_k3_128x128.csv")
    assert df.select("engine", "mode").unique(maintain_order=True).rows() == [
        ("vllm", "direct"),
        ("vllm", "spec"),
        ("sglang", "direct"),
        ("sglang", "spec"),
    ]
    last = df.row(27, named=True)
    # Cordatus 'ITL' is per request (last - first) / (n - 1): the TPOT column
    assert (last["tpot_ms_mean"], last["itl_ms_mean"]) == (34.40, None)
    assert (last["input_len"], last["output_len_requested"]) == (128.0, 128)  # from '_128x128'
    assert last["reported_rps_per_request"] == 0.11
    assert df["derived"].null_count() == df.height  # the file states everything used


def test_bench_cordatus_native_export() -> None:
    df = _one("Kimi-K3-table.csv")
    rec = df.row(1, named=True)
    assert rec["model"] == "Kimi-K3" and rec["config"] == "Kimi-K3-table"
    assert rec["ttft_ms_median"] == 98.40 and rec["tps_per_user_median"] == 83.95
    assert rec["output_len_requested"] == 128  # the tool's fixed max_tokens


@pytest.mark.skipif(not SEED.exists(), reason="shared seed data not mounted")
def test_bench_openzeka_fixture_is_the_seed() -> None:
    assert (FIXTURES / "openzeka_b300_kimi_k3_128x128.csv").read_bytes() == SEED.read_bytes()


def test_bench_aiperf_and_genai_perf_definitions() -> None:
    aiperf = _one("aiperf_conc8_profile_export_aiperf.csv").row(0, named=True)
    assert aiperf["concurrency"] == 8 and aiperf["num_requests"] == 200
    assert aiperf["tpot_ms_mean"] == 9.85 and aiperf["itl_ms_mean"] is None  # AIPerf ITL = TPOT
    assert aiperf["tps_per_user_p10"] == 97.66
    assert aiperf["tps_per_user_definition"] == "inverse_tpot"
    assert aiperf["latency_s_p90"] == pytest.approx(2.6507)
    assert aiperf["duration_s"] == 65.40 and aiperf["output_len"] == 256.0
    genai = _one("genai_perf_concurrency4_profile_export_genai_perf.csv").row(0, named=True)
    assert genai["concurrency"] == 4
    assert genai["itl_ms_mean"] == 8.20 and genai["tpot_ms_mean"] is None
    assert genai["itl_definition"] == "chunk_gap_per_token"
    assert genai["output_throughput_tps"] == 468.30


MALFORMED = [
    ("vllm_bench_serve_truncated.json", "not valid JSON (line 1, column 700"),
    ("vllm_bench_serve_summary_truncated.txt", "has no closing '=====' line"),
    ("sglang_bench_serving_bad_line.jsonl", "line 2 is not valid JSON"),
    ("sglang_bench_serving_summary_bad_value.txt", "'Benchmark duration (s)' (block of line 6) is '1m41s'"),
    ("cordatus_bad_number.csv", "line 3 'ttft_mean_ms' is 'fast'; expected a number"),
    ("aiperf_short_row_profile_export_aiperf.csv", "line 3 has 4 fields but the header has 14"),
    ("unknown_format.txt", "not a recognised benchmark result; expected one of"),
]


@pytest.mark.parametrize(("name", "fragment"), MALFORMED)
def test_bench_malformed_file_names_file_and_expectation(name: str, fragment: str) -> None:
    path = FIXTURES / "malformed" / name
    with pytest.raises(InputError) as info:
        read_bench_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert fragment in message
    assert "\n" not in message


def test_bench_unknown_file_lists_every_format() -> None:
    with pytest.raises(InputError) as info:
        read_bench_file(FIXTURES / "malformed" / "unknown_format.txt")
    for fmt in FORMATS:
        assert fmt.description in str(info.value)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"completed": 10, "mean_ttft_ms": 5.0, "model_id": "m"}', "missing required key(s) duration"),
        ('[{"duration": 1, "completed": 1, "mean_ttft_ms": 1, "model_id": "m"}, 3]', "holds a JSON int"),
        ('{"duration": "soon", "completed": 1, "mean_ttft_ms": 1, "model_id": "m"}', "'duration' is 'soon'"),
        (
            'Concurrency,"TTFT (Mean, ms)","TPS (Mean, tokens/s)"\n1,2,3\n',
            "lacks column(s) for latency_s_mean",
        ),
        (
            "engine,mode,concurrency,ttft_mean_ms,tps_mean,latency_mean_s\nvllm,direct,,1,2,3\n",
            "no valid concurrency",
        ),
        ("", "not a recognised benchmark result"),
    ],
)
def test_bench_malformed_variants(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "result.dat"
    path.write_text(content)
    with pytest.raises(InputError) as info:
        read_bench_file(path)
    assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_bench_unreadable_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_bench_file(tmp_path / "missing.json")
    with pytest.raises(InputError, match="is a directory"):
        read_bench_file(tmp_path)
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"{\x00\x01\x02")
    with pytest.raises(InputError, match="binary file"):
        read_bench_file(binary)


def test_bench_load_many_files_renumbers_rows() -> None:
    df = load_bench([FIXTURES / name for name, _, _ in VALID])
    assert df.height == sum(runs for _, _, runs in VALID)
    assert df["row"].to_list() == list(range(df.height))
    assert df["record"].max() == 27  # the Openzeka table's last run


def _vllm_copy(tmp_path: Path, name: str, **changes: object) -> Path:
    data = json.loads((FIXTURES / "vllm_bench_serve_c16.json").read_text())
    data.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_bench_one_file_per_level_forms_one_config(tmp_path: Path) -> None:
    files = [_vllm_copy(tmp_path, f"run-c{c}.json", max_concurrency=c) for c in (4, 8, 16)]
    df = load_bench(files)
    assert set(df["config"]) == {"vllm direct random-1024x128"}
    assert df["concurrency"].to_list() == [4, 8, 16]


def test_bench_shared_names_are_split_by_workload_then_file(tmp_path: Path) -> None:
    a = _vllm_copy(tmp_path, "a.json")
    b = _vllm_copy(tmp_path, "b.json")
    other = _vllm_copy(tmp_path, "long.json", total_input_tokens=160 * 4096, max_concurrency=32)
    df = load_bench([a, b, other])
    assert df["config"].to_list() == [
        "vllm direct random-1024x128 1024x128 [a]",
        "vllm direct random-1024x128 1024x128 [b]",
        "vllm direct random-1024x128 4096x128",
    ]


def test_bench_all_fixtures_keep_openzeka_configs_apart() -> None:
    df = load_bench(sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.suffix != ".md"))
    sglang_spec = df.filter(pl.col("engine") == "sglang", pl.col("mode") == "spec")
    # the 2048x512 block was benchmarked through `sglang-oai-chat`, the OpenAI chat protocol any
    # engine serves: its engine is unknown, so it no longer shares (and splits) the Openzeka name
    expected = {"sglang spec", "sglang spec qwen3-32b"}
    assert set(sglang_spec["config"]) == expected
    assert df.group_by("config", "concurrency").len()["len"].max() == 1
