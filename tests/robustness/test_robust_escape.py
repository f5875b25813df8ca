"""Text from a log never reaches the user's terminal (or a report) as control characters."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.cli import cli
from logparse.escape import for_html, for_terminal, json_line

# Characters a terminal acts on, or that hide or reorder text: none may come out of logparse.
UNSAFE = ["\x1b", "\x07", "\x00", "\x08", "\r", "\x7f", "\x9b", "\x9d", "\u202e", "\u2066", "\u2028"]
TITLE = "\x1b]0;pwned\x07"  # OSC: sets the terminal's title
CLEAR = "\x1b[2J"  # CSI: clears the screen
STATS = ("({rank} pid=7) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: 2870.5 tokens/s, "
         "Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV cache usage: 20.8%, "
         "Prefix cache hit rate: 0.0%")
# A user grammar that puts log text into the printed fields: model, version, warning category.
HOSTILE_RULES = r"""
engine = "vllm"

[[rule]]
name = "config_hostile"
kind = "config"
anchor = "HOSTILE model="
regex = '''HOSTILE[ ]model=(?P<model>[^|]*)\|version=(?P<version>[^|]*)'''
[[rule.sample]]
line = 'INFO 06-05 14:58:50 [x.py:1] HOSTILE model=m|version=v'
expect = { model = "m", version = "v" }

[[rule]]
name = "warning_hostile"
kind = "warning"
anchor = "HOSTILE warning="
regex = '''HOSTILE[ ]warning=(?P<category>[^|]*)'''
[[rule.sample]]
line = 'WARNING 06-05 14:58:50 [x.py:1] HOSTILE warning=c'
expect = { category = "c" }
"""


def run(*args: str):  # type: ignore[no-untyped-def]
    # color=True: click strips nothing, as when printing to a real terminal
    return CliRunner().invoke(cli, list(args), color=True)


def unsafe_in(text: str) -> list[str]:
    return [repr(ch) for ch in UNSAFE if ch in text]


def hostile_log(folder: Path, value: str, name: str = "server.log") -> Path:
    lines = [
        f"INFO 06-05 14:58:50 [x.py:1] HOSTILE model={value}|version={value}",
        f"WARNING 06-05 14:58:51 [x.py:1] HOSTILE warning={value}",
        STATS.format(rank=f"Engine{value}"),
        *[f"INFO 06-05 14:58:5{i} [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, {value}: 3"
          for i in range(3)],
        *[f"INFO 06-05 14:58:5{i} [loader.py:1] Loading weights took {value}" for i in range(3)],
        f"{value} lost line {CLEAR}",
    ]
    path = folder / name
    path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogateescape") + b"\n")
    return path


@pytest.fixture()
def rules(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.toml"
    path.write_text(HOSTILE_RULES, encoding="utf-8")
    return path


def test_ansi_from_a_log_never_reaches_the_terminal(tmp_path: Path, rules: Path) -> None:
    evil = TITLE + CLEAR
    log = hostile_log(tmp_path, evil, name=f"evil{TITLE}.log")
    result = run("ingest", str(log), "--patterns", str(rules))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    # the values were printed, visibly escaped: file name, version, model, ranks, warning category, drift
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in result.output.splitlines()
                if line[:1].strip() and "  " in line)
    shown = "\\x1b]0;pwned\\x07"  # CSI sequences are already removed from a body before it is read
    assert rows["log"] == f"{tmp_path}/evil{shown}.log"
    assert rows["engine"] == f"vllm {shown}"
    assert rows["model"] == shown and rows["ranks"] == f"Engine{shown}" and rows["warnings"] == f"{shown} 1"
    assert f"unknown field '{shown}' on 3 lines" in result.output
    assert f"matched up to 'Loading weights took ', stopped at '{shown}" in result.output

    for args in (["--format", "jsonl"], ["--format", "json"]):
        result = run("ingest", str(log), "--patterns", str(rules), *args)
        assert result.exit_code == 0
        assert not unsafe_in(result.output)
    facts = json.loads(result.stdout)
    assert facts["model"] == TITLE and facts["source"] == str(log)  # the exact values, escaped as \u001b
    assert facts["drift"][0]["stopped_at"].startswith(TITLE)

    for args in ([], ["--rule"], ["--format", "json"]):
        result = run("unknown", str(log), *args)
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "pwned" in result.output


def test_escapers() -> None:
    assert for_terminal(TITLE + CLEAR + "\u202eabc\r\n") == "\\x1b]0;pwned\\x07\\x1b[2J\\u202eabc\\r\\n"
    assert for_terminal("a\nb\tc", keep_newlines=True) == "a\nb\tc"
    assert for_terminal("plain ünïcode ✓") == "plain ünïcode ✓"
    assert for_terminal("\udcff") == "\\udcff"  # a file name that was not UTF-8 does not crash the print
    assert for_html('<script>alert("x")</script>\x1b') == (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\\x1b")
    assert json.loads(json_line({"m": "\x1b\x9b\u202e"}, ensure_ascii=False)) == {"m": "\x1b\x9b\u202e"}
    assert not unsafe_in(json_line({"m": "\x1b\x9b\u202e\x7f"}, ensure_ascii=False))


hostile = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="\n|", exclude_categories=("Cs",)), max_size=8)
    | st.sampled_from(["\x1b", "\x07", "\x9b", "\r", "\x00", "\u202e", "<script>", "'''", '"', "\\", "%",
                       TITLE, CLEAR, "\x1b[31m", "(", ")", " pid=1) "]),
    min_size=1, max_size=8,
).map("".join)


@settings(max_examples=25)
@given(value=hostile)
def test_hostile_text_in_every_field_is_escaped(tmp_path_factory: pytest.TempPathFactory, value: str) -> None:
    folder = tmp_path_factory.mktemp("hostile")
    rules = folder / "hostile.toml"
    rules.write_text(HOSTILE_RULES, encoding="utf-8")
    log = hostile_log(folder, value)
    for args in (["ingest", str(log), "--patterns", str(rules)],
                 ["ingest", str(log), "--patterns", str(rules), "--format", "jsonl"],
                 ["unknown", str(log), "--engine", "vllm", "--top", "0"],
                 ["unknown", str(log), "--engine", "vllm", "--rule"]):
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
        assert not unsafe_in(result.output), (args, result.output)
    assert not unsafe_in(for_html(value)) and "<" not in for_html(value)
