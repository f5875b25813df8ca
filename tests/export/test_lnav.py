"""`logparse export lnav`: logparse's grammars as lnav formats, checked by lnav itself.

The pure tests read the formats with the `regex` module (which reads the exported PCRE2 patterns
as PCRE2 does); the others install the formats into a temporary lnav configuration (HOME) and run
Debian's `lnav` headless: it must load them without a format error, take the real excerpts of
each engine as its format, and give by `;SELECT` the values logparse types.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import regex
from click.testing import CliRunner
from export_inputs import REAL, REAL_EXCERPTS

import logparse
from logparse.cli import cli
from logparse.export.lnav import build_format, format_name
from logparse.export.lnav_tables import guess_type, sample_problems
from logparse.grammar.regex_ir import to_pcre
from logparse.grammar import load_grammar

ENGINES = ("vllm", "sglang")
VLLM = [n for n in REAL_EXCERPTS if n.startswith("vllm/")]
SGLANG = [n for n in REAL_EXCERPTS if n.startswith("sglang/")]
# Fields of each engine's stats lines (the generation throughputs first), and excerpts that print them
FIELDS = [
    ("vllm", "engine_stats", "gen_tps", VLLM),
    ("vllm", "engine_stats", "gpu_kv_pct", VLLM),
    ("sglang", "decode_batch", "gen_tps", SGLANG),
    ("sglang", "decode_batch", "token_usage", SGLANG),
    ("sglang", "prefill_batch", "input_tps", ["sglang/025.log", "sglang/053.log", "sglang/059.log"]),
]
# Lines with a stamp (logparse's `ts`) that lnav must take as the start of a message of the
# engine's format, per excerpt (measured: 341 of 348 vLLM and 315 of 317 SGLang lines in all
# the real excerpts; what it misses is tqdm text before a record and non-English month names).
MIN_RECOGNISED = 0.9


# -- without lnav ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def grammar() -> Any:
    return load_grammar()


@pytest.fixture(scope="module")
def formats(grammar: Any) -> dict[str, Any]:
    return {engine: build_format(grammar, engine) for engine in ENGINES}


@pytest.mark.parametrize("engine", ENGINES)
def test_every_sample_is_matched_by_exactly_one_regex(formats: dict[str, Any], engine: str) -> None:
    body = formats[engine].body
    compiled = {name: regex.compile(entry["pattern"], regex.V0) for name, entry in body["regex"].items()}
    assert len(body["sample"]) > 50
    for sample in body["sample"]:
        hits = [name for name, c in compiled.items() if c.fullmatch(sample["line"])]
        assert len(hits) == 1, (sample["line"], hits)
        assert compiled[hits[0]].fullmatch(sample["line"]).group("timestamp")


@pytest.mark.parametrize("engine", ENGINES)
def test_search_tables_give_the_rules_sample_values(
    grammar: Any, formats: dict[str, Any], engine: str
) -> None:
    tables = formats[engine].tables
    rules = {rule.name: rule for rule in grammar.engines[engine].rules}
    assert len(tables) == len([r for r in rules.values() if not r.fallback]) and len(tables) > 90
    assert set(formats[engine].body["search-table"]) == {t.name for t in tables}
    problems = {t.name: p for t in tables if (p := sample_problems(grammar, rules[t.rule], t))}
    assert problems == {}


@pytest.mark.parametrize("engine", ENGINES)
def test_no_table_finds_another_rules_samples(grammar: Any, formats: dict[str, Any], engine: str) -> None:
    tables = formats[engine].tables
    rules = {rule.name: rule for rule in grammar.engines[engine].rules}
    found = [
        (table.rule, other.rule)
        for table in tables
        for other in tables
        if other.rule != table.rule
        and any(regex.search(table.pattern.pattern, s.line) for s in rules[other.rule].samples)
    ]
    assert found == []


def test_one_field_in_several_alternatives() -> None:
    source = r"a=(?P<x>[0-9]+)|b=(?P<x>[0-9]+),(?P<y>[a-z]+)"
    reset = to_pcre(source)
    assert reset.pattern.startswith("(?|") and set(reset.fields) == {"x", "y"}
    m = regex.fullmatch(reset.pattern, "b=7,q")
    assert m is not None and (m.group("x"), m.group("y")) == ("7", "q")
    assert regex.fullmatch(reset.pattern, "a=3").group("y") is None
    apart = to_pcre(source, branch_reset=False)
    assert apart.fields == {"x": "x", "x__2": "x", "y": "y"}
    assert "(?|" not in apart.pattern


def test_a_group_holding_others_is_captured_beside_them() -> None:
    # lnav types a search-table column by the group that closes in its place: none may nest
    flat = to_pcre(r"took (?P<what>(?P<n>[0-9]+) s)(?: now)?", branch_reset=False)
    assert regex.search(r"\(\?<\w+>[^()]*\(\?<", flat.pattern) is None
    m = regex.fullmatch(flat.pattern, "took 12 s now")
    assert m is not None and (m.group("what"), m.group("n")) == ("12 s", "12")
    assert guess_type(flat.captures["n"]) == "integer" and guess_type(flat.captures["what"]) == "text"


def test_text_never_crosses_a_line_end() -> None:
    pattern = to_pcre(r"x (?P<rest>.*) [^,]+ \s+").pattern
    assert regex.search(pattern, "x a\nb c d") is None
    assert regex.search(pattern, "x a b c  ") is not None


def test_numbers_with_thousands_separators_stay_text(grammar: Any, formats: dict[str, Any]) -> None:
    kv = {t.rule: t for t in formats["vllm"].tables}["kv_pool_cache_size"]
    assert kv.columns["tokens"] == "text"  # lnav would read "922,496" as 922
    line = next(r for r in grammar.engines["vllm"].rules if r.name == "kv_pool_cache_size").samples[0].line
    m = regex.search(kv.pattern.pattern, line)
    assert m is not None and m.group("tokens") == "922,496"


# -- the command ------------------------------------------------------------------------------
def test_writes_one_file_per_engine(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export", "lnav", "-o", str(tmp_path / "f"), "--engine", "sglang"])
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "f").iterdir()] == ["logparse_sglang.json"]
    document = json.loads((tmp_path / "f" / "logparse_sglang.json").read_text())
    assert set(document) == {"$schema", "logparse_sglang"}
    assert "sglang_decode_batch" in document["logparse_sglang"]["search-table"]


def test_keeps_other_files_and_exports_user_rules(tmp_path: Path) -> None:
    (tmp_path / "mine.json").write_text("{}")
    rules = tmp_path / "mine.toml"
    rules.write_text(
        'engine = "vllm"\n[[rule]]\nname = "my_drain"\nkind = "warning"\n'
        "regex = 'Draining (?P<message>[0-9]+ requests)'\n[[rule.sample]]\n"
        "line = 'WARNING 04-10 03:44:38 [drain.py:12] Draining 4 requests'\n"
        "expect = { message = '4 requests' }\n"
    )
    result = CliRunner().invoke(cli, ["export", "lnav", "-o", str(tmp_path), "--patterns", str(rules)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "logparse_sglang.json",
        "logparse_vllm.json",
        "mine.json",
    ]
    body = json.loads((tmp_path / "logparse_vllm.json").read_text())["logparse_vllm"]
    assert "Draining" in body["search-table"]["vllm_my_drain"]["pattern"]
    assert any(s["line"].endswith("Draining 4 requests") for s in body["sample"])


@pytest.mark.parametrize("where", ["file", "under_file"])
def test_unwritable_folder_is_one_error(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    target = blocker if where == "file" else blocker / "formats"
    result = CliRunner().invoke(cli, ["export", "lnav", "-o", str(target)])
    assert result.exit_code == 1
    assert (
        f"Error: cannot write {target}: not a directory (a file is in the way of a folder)" in result.output
    )
    assert "Traceback" not in result.output


# -- with lnav --------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def lnav() -> str:
    """Path of `lnav`, installing Debian's `lnav` when missing and possible."""
    found = shutil.which("lnav")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "lnav"],
            env=env,
            capture_output=True,
            timeout=600,
            check=False,
        )
        found = shutil.which("lnav")
    if found is None:
        pytest.skip(
            "needs lnav (Debian package `lnav`; `make test` installs it; apt-get install failed here or we are not root)"
        )
    return found


@pytest.fixture(scope="session")
def lnav_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose lnav configuration is a fresh folder holding the exported formats
    (lnav reads formats from $HOME/.lnav/formats/*/; the real ~/.lnav is never touched)."""
    home = tmp_path_factory.mktemp("lnav-home")
    result = CliRunner().invoke(cli, ["export", "lnav", "-o", str(home / ".lnav" / "formats" / "installed")])
    assert result.exit_code == 0, result.output
    scratch = tmp_path_factory.mktemp("lnav-tmp")
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    return {**env, "HOME": str(home), "TMPDIR": str(scratch), "TZ": "UTC"}


def run_lnav(lnav: str, env: dict[str, str], path: Path, sql: str) -> list[dict[str, Any]]:
    """The rows of `sql` over `path` in headless lnav (none when the query gives none)."""
    done = subprocess.run(
        [lnav, "-n", "-c", ";" + sql, "-c", ":write-json-to -", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if "no query result" in done.stderr:
        return []
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def test_lnav_loads_the_formats_without_a_problem(lnav: str, lnav_env: dict[str, str]) -> None:
    done = subprocess.run(
        [lnav, "-C"], env=lnav_env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and "error" not in done.stderr and "warning" not in done.stderr, done.stderr


def test_lnav_reports_a_broken_sample(lnav: str, lnav_env: dict[str, str], tmp_path: Path) -> None:
    # the check above can fail: lnav validates every sample of the format when it loads it
    installed = Path(lnav_env["HOME"]) / ".lnav" / "formats" / "installed" / "logparse_vllm.json"
    document = json.loads(installed.read_text())
    document["logparse_vllm"]["sample"][0]["line"] = "no stamp here"
    folder = tmp_path / ".lnav" / "formats" / "installed"
    folder.mkdir(parents=True)
    (folder / "logparse_vllm.json").write_text(json.dumps(document))
    env = {**lnav_env, "HOME": str(tmp_path)}
    done = subprocess.run([lnav, "-C"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "sample does not match any patterns" in done.stderr


@pytest.mark.parametrize("name", REAL_EXCERPTS)
def test_lnav_recognises_the_real_excerpts(lnav: str, lnav_env: dict[str, str], name: str) -> None:
    engine = name.split("/")[0]
    path = REAL / name
    stamped = {
        line
        for table in logparse.ingest(path, engine=engine).tables.values()
        if "ts" in table.columns
        for line in table.filter(table["ts"].is_not_null())["line_no"].to_list()
    }
    rows = run_lnav(lnav, lnav_env, path, "SELECT log_line, log_format FROM all_logs")
    ours = {row["log_line"] + 1 for row in rows if row["log_format"] == format_name(engine)}
    assert stamped and len(ours & stamped) >= MIN_RECOGNISED * len(stamped), (
        len(ours & stamped),
        len(stamped),
    )


@pytest.mark.parametrize(("engine", "kind", "field", "excerpts"), FIELDS)
def test_lnav_select_gives_logparse_values(
    lnav: str,
    lnav_env: dict[str, str],
    formats: dict[str, Any],
    engine: str,
    kind: str,
    field: str,
    excerpts: list[str],
) -> None:
    names = [t.name for t in formats[engine].tables if t.kind == kind and field in t.pattern.fields.values()]
    assert names
    sql = " UNION ALL ".join(f"SELECT log_line, match_index, {field} AS v FROM {n}" for n in names)
    compared = 0
    for name in excerpts:
        typed = logparse.ingest(REAL / name, engine=engine).tables.get(kind)
        if typed is None or field not in typed.columns:
            continue
        want = [v for v in typed.sort("line_no")[field].to_list() if v is not None]
        got = [
            row["v"]
            for row in run_lnav(lnav, lnav_env, REAL / name, sql + " ORDER BY 1, 2")
            if row["v"] is not None
        ]
        assert got == pytest.approx(want, abs=1e-9), name
        compared += len(want)
    assert compared >= 10
