"""The command line: help everywhere, clean errors, outputs that agree with the library."""
from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import LAZY_COMMANDS, cli

V1_STATS = ("(APIServer pid=719) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: 2870.5 "
            "tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV cache "
            "usage: 20.8%, Prefix cache hit rate: 0.0%")
SGL_DECODE = ("[2025-02-27 04:46:39 TP0] Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
              "gen throughput (token/s): 186.64, #queue-req: 0")


@pytest.fixture()
def vllm_log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text("\n".join([V1_STATS, "some line nobody knows", V1_STATS.replace("14:58:56", "14:59:06")]) + "\n")
    return path


def run(*args: str, input: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.mark.parametrize("command", sorted(LAZY_COMMANDS))
def test_every_command_has_help(command: str) -> None:
    import click

    listed = cli.list_commands(click.Context(cli))
    result = run(command, "--help")
    if command not in listed:
        pytest.skip(f"{command} is not built yet")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_ingest_writes_one_table_per_kind(vllm_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("ingest", str(vllm_log), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "coverage 66.7%" in result.output
    stats = pl.read_parquet(out / "engine_stats.parquet")
    assert stats["line_no"].to_list() == [1, 3]
    assert stats["gen_tps"].to_list() == [0.8, 0.8] and stats["rank"].to_list() == ["APIServer"] * 2
    assert stats.schema["time"] == pl.Datetime("us", "UTC")
    unparsed = pl.read_parquet(out / "unparsed.parquet")
    assert unparsed["raw"].to_list() == ["some line nobody knows"]


def test_jsonl_streams_one_event_per_line(vllm_log: Path) -> None:
    result = run("ingest", str(vllm_log), "--format", "jsonl")
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [e["line_no"] for e in events] == [1, 2, 3]
    assert [e["kind"] for e in events] == ["engine_stats", "unparsed", "engine_stats"]


def test_json_summary(vllm_log: Path) -> None:
    result = run("ingest", str(vllm_log), "--format", "json")
    facts = json.loads(result.stdout)
    assert facts["engine"] == "vllm" and facts["lines"] == 3 and facts["typed_lines"] == 2
    assert facts["ranks"] == ["APIServer"]


def test_stdin_and_gzip(tmp_path: Path) -> None:
    result = run("ingest", "-", "--format", "json", input=(SGL_DECODE + "\n").encode())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["engine"] == "sglang"
    gz = tmp_path / "s.log.gz"
    gz.write_bytes(gzip.compress(((SGL_DECODE + "\n") * 3).encode()))
    facts = json.loads(run("ingest", str(gz), "--format", "json").stdout)
    assert facts["lines_per_kind"] == {"decode_batch": 3}


@pytest.mark.parametrize(("content", "name"), [
    (b"", "empty.log"),
    (b"\x00" * 5000, "nul.log"),
    (bytes(range(256)) * 50, "binary.log"),
    (b"x" * (1 << 20) + b"\n", "mega.log"),
    ("INFO 06-05 14:58:46 caf\u00e9\r\n".encode() + b"\xff\xfe\r\n", "crlf.log"),
    (b"Loading: 10%|\r20%|\r30%|\n", "tqdm.log"),
])
def test_bad_input_is_an_error_or_unparsed_never_a_traceback(tmp_path: Path, content: bytes, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = run("ingest", str(path), "--engine", "vllm", "--out", str(tmp_path / "o"), "--format", "json")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["lines"] == content.count(b"\n") + (1 if content and not content.endswith(b"\n") else 0)


def test_engine_not_detected_names_the_option(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"hello\nworld\n")
    result = run("ingest", str(path))
    assert result.exit_code == 2
    assert "--engine vllm" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("target", ["missing.log", "."])
def test_missing_file_and_directory(tmp_path: Path, target: str) -> None:
    result = run("ingest", str(tmp_path / target))
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "Traceback" not in result.output


def test_out_refuses_foreign_folder_unless_forced(vllm_log: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    result = run("ingest", str(vllm_log), "--out", str(foreign))
    assert result.exit_code == 1 and "--force" in result.output
    assert run("ingest", str(vllm_log), "--out", str(foreign), "--force").exit_code == 0
    assert (foreign / "notes.txt").read_text() == "keep me"
    # a folder logparse wrote is reused without --force
    assert run("ingest", str(vllm_log), "--out", str(foreign)).exit_code == 0


def test_unknown_engine(vllm_log: Path) -> None:
    result = run("ingest", str(vllm_log), "--engine", "tgi")
    assert result.exit_code == 2 and "unknown engine 'tgi'" in result.output


def test_detect_command(vllm_log: Path) -> None:
    result = run("detect", str(vllm_log))
    assert result.exit_code == 0
    assert result.output.split(": ")[1].startswith("vllm 1.00")


def test_python_api_mirrors_cli(vllm_log: Path) -> None:
    import logparse

    result = logparse.ingest(vllm_log)
    assert set(result.tables) == {"engine_stats", "unparsed"}
    assert result.lines == 3 and result.coverage == pytest.approx(2 / 3)


def test_several_logs_make_a_dataset_partitioned_by_run_and_kind(vllm_log: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.log"
    other.write_text(SGL_DECODE + "\n")
    out = tmp_path / "multi"
    assert run("ingest", str(vllm_log), str(other), "--out", str(out), "--jobs", "1").exit_code == 0
    assert (out / "run=server" / "kind=engine_stats" / "part-00000.parquet").exists()
    assert (out / "run=other" / "kind=decode_batch" / "part-00000.parquet").exists()
    assert sorted(n for n in os.listdir(out / "run=other") if n != "_ingest.json") == ["kind=decode_batch"]
    assert (out / ".logparse").exists()


# -- a closed stdout (`| head -1`): a quiet exit with status 141 ----------------------------------
def _piped_into_head(*args: str) -> tuple[int, bytes, bytes]:
    """Run `python -m logparse ARGS | head -1`: logparse's status, what head printed, logparse's stderr."""
    writer = subprocess.Popen([sys.executable, "-m", "logparse", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    head = subprocess.Popen(["head", "-1"], stdin=writer.stdout, stdout=subprocess.PIPE)
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.close()  # head alone holds the read end: when it exits, the pipe is closed
    first, _ = head.communicate(timeout=120)
    err = writer.stderr.read()
    writer.stderr.close()
    return writer.wait(timeout=120), first, err


@pytest.fixture(scope="module")
def many_unknown_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vLLM log with a thousand line shapes no rule knows: far more output than a pipe holds."""
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(4000)]
    path = tmp_path_factory.mktemp("unknown") / "unknown.log"
    lines = [V1_STATS] + [" ".join(rng.sample(words, rng.randint(2, 9))) for _ in range(1200)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("extra", [[], ["--format", "json"]], ids=["text", "json-in-one-write"])
def test_unknown_into_head_exits_141_quietly(many_unknown_lines: Path, extra: list[str]) -> None:
    status, first, err = _piped_into_head("unknown", "--top", "0", *extra, str(many_unknown_lines))
    assert first and err == b"", err.decode(errors="replace")
    assert status == 141


def test_ingest_jsonl_into_head_exits_141_quietly(tmp_path: Path) -> None:
    path = tmp_path / "stats.log"
    path.write_text((V1_STATS + "\n") * 3000)  # about 1 MB of JSON lines
    status, first, err = _piped_into_head("ingest", "--format", "jsonl", str(path))
    assert first.startswith(b'{"kind": "engine_stats"') and err == b"", err.decode(errors="replace")
    assert status == 141


def test_broken_pipe_inside_a_command_is_status_141(vllm_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import logparse.headline as headline_module

    def closed(_facts: object) -> str:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(headline_module, "render_headline", closed)
    result = run("ingest", str(vllm_log))
    assert result.exit_code == 141 and result.output == ""


# -- --json everywhere ---------------------------------------------------------------------------
def test_detect_json_gives_scores_per_log(vllm_log: Path, tmp_path: Path) -> None:
    sglang = tmp_path / "sglang.log"
    sglang.write_text(SGL_DECODE + "\n")
    unknown = tmp_path / "unknown.log"
    unknown.write_text("hello\nworld\n")
    result = run("detect", "--json", str(vllm_log), str(sglang), str(unknown))
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert [f["log"] for f in found] == [str(vllm_log), str(sglang), str(unknown)]
    assert [f["engine"] for f in found] == ["vllm", "sglang", None]
    assert found[0]["scores"]["vllm"] == 1.0 and set(found[0]["scores"]) == {"sglang", "vllm"}
    assert found[2]["scores"] == {"sglang": 0.0, "vllm": 0.0} and found[2]["no_content"] is None


def test_ingest_json_is_format_json(vllm_log: Path) -> None:
    alias = run("ingest", str(vllm_log), "--json")
    assert alias.exit_code == 0, alias.output
    assert json.loads(alias.stdout) == json.loads(run("ingest", str(vllm_log), "--format", "json").stdout)
    assert "--json" in run("ingest", "--help").output
    clash = run("ingest", str(vllm_log), "--json", "--format", "jsonl")
    assert clash.exit_code == 2 and "--format jsonl" in clash.output


# -- help ------------------------------------------------------------------------------------------
def test_top_level_help_says_what_ingest_prints_and_the_exit_codes() -> None:
    text = run("--help").output
    ingest_line = next(line for line in text.splitlines() if "logparse ingest" in line)
    assert "headline" in ingest_line and "post-mortem" not in ingest_line
    assert "print a summary" not in text
    codes = text[text.index("Exit status"):]
    for code, words in [("0", "done"), ("1", "error"), ("2", "--engine"), ("141", "closed")]:
        assert any(line.split()[:1] == [code] and words in line for line in codes.splitlines()), (code, codes)


@pytest.mark.parametrize("path", [["ingest"], ["detect"], ["patterns", "check"]], ids=" ".join)
def test_every_option_states_its_default(path: list[str]) -> None:
    import click

    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    silent = [p.name for p in command.params
              if isinstance(p, click.Option) and not p.is_flag and p.name != "help"
              and not p.show_default and "[default:" not in (p.help or "")]
    assert silent == []


# -- empty and blank logs --------------------------------------------------------------------------
@pytest.fixture(params=["empty", "blank"])
def no_text_log(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / f"{request.param}.log"
    path.write_bytes(b"" if request.param == "empty" else b"\n  \n\t\n")
    return path, {"empty": "empty file", "blank": "blank lines only"}[request.param]


@pytest.mark.parametrize("extra", [[], ["--jobs", "2"]], ids=["one-thread", "two-threads"])
def test_ingest_of_a_log_without_text_claims_no_engine(no_text_log: tuple[Path, str],
                                                       extra: list[str]) -> None:
    path, why = no_text_log
    text = run("ingest", str(path), *extra)
    assert text.exit_code == 0, text.output
    rows = {line[:13].strip(): line[13:] for line in text.output.splitlines()}
    assert rows["engine"] == f"- ({why})"
    assert rows["lines"].endswith("(0 typed, coverage -)")
    facts = json.loads(run("ingest", str(path), "--json", *extra).stdout)
    assert facts["engine"] is None and facts["engine_scores"] == {} and facts["coverage"] is None
    assert facts["no_content"] == why and facts["lines"] == (0 if why == "empty file" else 3)


@pytest.mark.parametrize("extra", [[], ["--jobs", "2"]], ids=["one-thread", "two-threads"])
def test_blank_stdin_claims_no_engine(extra: list[str]) -> None:
    # stdin is not looked at before it is read: the reader itself finds nothing to detect from
    result = CliRunner().invoke(cli, ["ingest", "-", "--json", *extra], input="\n  \n")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["engine"] is None and facts["no_content"] == "blank lines only" and facts["lines"] == 2


def test_ingest_jsonl_and_dataset_of_logs_without_text(tmp_path: Path, vllm_log: Path) -> None:
    empty, blank = tmp_path / "empty.log", tmp_path / "blank.log"
    empty.write_bytes(b"")
    blank.write_bytes(b"\n\n")
    jsonl = run("ingest", str(blank), "--format", "jsonl")
    assert jsonl.exit_code == 0 and "2 events (blank lines only, no engine)" in jsonl.stderr
    several = run("ingest", str(empty), str(blank), str(vllm_log), "--json", "--jobs", "1")
    assert several.exit_code == 0, several.output
    facts = json.loads(several.stdout)
    assert [f["engine"] for f in facts] == [None, None, "vllm"]
    assert [f["no_content"] for f in facts] == ["empty file", "blank lines only", None]


def test_detect_of_logs_without_text(no_text_log: tuple[Path, str]) -> None:
    path, why = no_text_log
    text = run("detect", str(path))
    assert text.exit_code == 0 and text.output == f"{path}: {why}, no engine\n"
    found = json.loads(run("detect", "--json", str(path)).stdout)
    assert found == [{"log": str(path), "engine": None, "scores": {"sglang": 0.0, "vllm": 0.0},
                      "no_content": why}]


def test_blank_lines_before_the_text_are_not_a_blank_log(tmp_path: Path) -> None:
    path = tmp_path / "late.log"
    path.write_text("\n" * 1000 + V1_STATS + "\n")
    facts = json.loads(run("ingest", str(path), "--json").stdout)
    assert facts["engine"] == "vllm" and facts["no_content"] is None
    assert json.loads(run("detect", "--json", str(path)).stdout)[0]["engine"] == "vllm"
