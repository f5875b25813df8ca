"""The documented schema: kinds.toml and the engine files document every kind and column, the loader
validates the keys, `logparse schema` prints them, the Parquet files carry them, the README appendix
is their markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.errors import PatternError
from logparse.grammar import ADDED_COLUMNS, COMMON_FIELDS, build_grammar, builtin_files
from logparse.grammar.check import check_docs
from logparse.store.describe import REGENERATE, describe, render_markdown

ROOT = Path(__file__).resolve().parents[2]
VLLM_LOG = ROOT / "fixtures" / "vllm" / "gpustack-64k.log"
SGLANG_LOG = ROOT / "fixtures" / "sglang" / "gpustack-64k.log"
USER_KIND = """engine = "vllm"
[kinds.server_facts]
description = "vLLM's `Supported tasks` start-up line"
tasks = { type = "str", unit = "text", description = "the task list as printed" }
[[rule]]
name = "supported_tasks"
kind = "server_facts"
anchor = "Supported tasks: "
regex = \'\'\'Supported[ ]tasks:[ ](?P<tasks>.+)\'\'\'
[[rule.sample]]
line = "(APIServer pid=1) INFO 08-03 09:00:08 [api_server.py:676] Supported tasks: ['generate']"
expect = { tasks = "['generate']" }
"""


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def builtin():  # type: ignore[no-untyped-def]
    return build_grammar(builtin_files())


def _with(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "user.toml"
    path.write_text(text, encoding="utf-8")
    return build_grammar([*builtin_files(), path])


def test_every_builtin_kind_and_column_is_documented(builtin) -> None:  # type: ignore[no-untyped-def]
    assert [str(p) for p in check_docs(builtin)] == []
    assert set(builtin.common_docs) == {*COMMON_FIELDS, *ADDED_COLUMNS}
    info = describe(builtin)
    assert {k.name for k in info.kinds} == set(builtin.kinds)
    for kind in info.kinds:
        assert kind.description, kind.name
        for column in (*info.common, *kind.columns):
            assert column.unit and column.description, (kind.name, column.name)


def test_units_follow_the_printed_text(builtin) -> None:  # type: ignore[no-untyped-def]
    docs = builtin.column_docs
    assert docs["engine_stats"]["gpu_kv_pct"].unit == "percent 0-100"
    assert docs["decode_batch"]["token_usage"].unit == "fraction 0-1"
    assert docs["prefill_batch"]["input_tps"].unit == "tokens/s"
    # the `_s` suffix is seconds, `_gib` GiB, on every kind that has one
    for kind, columns in docs.items():
        for name, doc in columns.items():
            if name.endswith("_gib"):
                assert doc.unit == "GiB", (kind, name)
            if name.endswith("_pct"):
                assert doc.unit == "percent 0-100", (kind, name)


def test_unknown_key_in_a_field_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="unknown key 'units'"):
        _with(tmp_path, '[kinds.engine_stats]\nnew_field = { type = "int", units = "tokens" }\n')


def test_unknown_common_column_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="not a common column"):
        _with(tmp_path, '[common.timestamp]\nunit = "s"\ndescription = "no such column"\n')


def test_a_column_has_one_unit(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="a column has one unit"):
        _with(
            tmp_path,
            '[kinds.engine_stats]\ngen_tps = { type = "float", unit = "tokens/min", description = "x" }\n',
        )


def test_derived_column_needs_numeric_sources_and_a_new_name(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="not int or float fields"):
        _with(
            tmp_path,
            '[kinds.config]\nv = { type = "float", from = { version = 1.0 }, unit = "x", description = "x" }\n',
        )
    with pytest.raises(PatternError, match="a derived column is new"):
        _with(
            tmp_path,
            '[kinds.engine_stats]\ngen_tps = { type = "float", from = { prompt_tps = 1.0 }, unit = "tokens/s", description = "x" }\n',
        )
    with pytest.raises(PatternError, match="must be a number"):
        _with(
            tmp_path,
            '[kinds.engine_stats]\nq = { type = "float", from = { gen_tps = "x" }, unit = "x", description = "x" }\n',
        )


def test_rule_types_take_the_documented_form(tmp_path: Path) -> None:
    grammar = _with(
        tmp_path,
        USER_KIND.replace(
            'tasks = { type = "str", unit = "text", description = "the task list as printed" }\n', ""
        ).replace(
            "regex = ",
            'types = { tasks = { type = "str", unit = "text", description = "the tasks" } }\nregex = ',
        ),
    )
    assert grammar.column_docs["server_facts"]["tasks"].description == "the tasks"
    assert [str(p) for p in check_docs(grammar)] == []


def test_patterns_check_fails_on_an_undocumented_column(tmp_path: Path) -> None:
    path = tmp_path / "user.toml"
    path.write_text(USER_KIND.replace('unit = "text", ', ""), encoding="utf-8")
    got = run("patterns", "check", str(path))
    assert got.exit_code == 1
    assert "kind 'server_facts', column 'tasks'" in got.output and "error: no unit" in got.output


def test_schema_json_lists_kinds_columns_units(builtin) -> None:  # type: ignore[no-untyped-def]
    got = run("schema", "engine_stats", "--format", "json")
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert [k["name"] for k in doc["kinds"]] == ["engine_stats"]
    columns = {c["name"]: c for c in doc["kinds"][0]["columns"]}
    assert list(columns)[: len(builtin.schema("engine_stats"))] == list(builtin.schema("engine_stats"))
    assert columns["gpu_kv_pct"]["unit"] == "percent 0-100" and columns["gpu_kv_pct"]["origin"] == "printed"
    assert (
        columns["kv_usage_frac"]["origin"] == "derived" and columns["kv_usage_frac"]["unit"] == "fraction 0-1"
    )
    assert [c["name"] for c in doc["common"]][:3] == ["line_no", "ts", "time"]
    assert doc["kinds"][0]["has_extra"] is True


def test_schema_text_and_unknown_kind() -> None:
    got = run("schema", "decode_batch")
    assert got.exit_code == 0
    assert "token_usage" in got.stdout and "fraction 0-1" in got.stdout
    assert "\ndecode_batch (has extra): " in got.stdout and "\nengine_stats" not in got.stdout
    bad = run("schema", "no_such_kind")
    assert bad.exit_code == 1 and "Error: unknown kind 'no_such_kind'" in bad.output
    assert "Traceback" not in bad.output


def test_schema_shows_a_user_grammars_kinds(tmp_path: Path) -> None:
    path = tmp_path / "user.toml"
    path.write_text(USER_KIND, encoding="utf-8")
    got = run("schema", "server_facts", "--patterns", str(path), "--format", "markdown")
    assert got.exit_code == 0, got.output
    assert (
        "### server_facts" in got.stdout
        and "| `tasks` | str | text | the task list as printed |" in got.stdout
    )


@pytest.mark.parametrize("log", [VLLM_LOG, SGLANG_LOG], ids=["vllm", "sglang"])
def test_parquet_columns_carry_description_and_unit(log: Path, tmp_path: Path, builtin) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    got = run("ingest", str(log), "--out", str(out))
    assert got.exit_code == 0, got.output
    files = sorted(out.glob("*.parquet"))
    assert files
    for path in files:
        info = describe(builtin, path.stem)
        expected = {c.name: c for c in (*info.common, *info.kinds[0].columns)}
        schema = pq.read_schema(path)
        for field in schema:
            meta = field.metadata or {}
            want = expected[field.name]
            assert meta[b"description"].decode() == want.description, (path.name, field.name)
            assert meta[b"unit"].decode() == want.unit, (path.name, field.name)
            assert (meta.get(b"derived") == b"true") == (want.origin == "derived"), (path.name, field.name)


def test_duckdb_reads_the_documented_files(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    import polars as pl

    out = tmp_path / "out"
    assert run("ingest", str(VLLM_LOG), "--out", str(out)).exit_code == 0
    path = out / "engine_stats.parquet"
    frame = pl.read_parquet(path)
    rows = duckdb.sql(f"select count(*), sum(gpu_kv_pct), sum(kv_usage_frac) from '{path}'").fetchall()
    assert rows[0][0] == frame.height > 0
    assert rows[0][1] == pytest.approx(frame["gpu_kv_pct"].sum())
    assert rows[0][2] == pytest.approx(frame["gpu_kv_pct"].sum() / 100)


def test_readme_appendix_is_the_generated_schema(builtin) -> None:  # type: ignore[no-untyped-def]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    generated = render_markdown(describe(builtin))
    title = generated.splitlines()[0]
    assert title in readme, f"README has no appendix {title!r}; append the output of `{REGENERATE}`"
    start = readme.index(title)
    following = readme.find("\n## ", start + len(title))
    appendix = readme[start:] if following < 0 else readme[start : following + 1]
    assert appendix == generated, (
        f"README's appendix {title!r} differs from the grammar's schema; regenerate it with "
        f"`{REGENERATE}` and put the output in place of that section"
    )
