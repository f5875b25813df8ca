"""`logparse emulate --help` states every option's default and lists the valid eras and presets."""
from __future__ import annotations

import click
from click.testing import CliRunner

from logparse.cli import cli
from logparse.cli.emulate import emulate_command
from logparse.emulate.eras import SGLANG_ERAS, VLLM_ERAS
from logparse.emulate.presets import PRESETS, scenarios


def _help_texts() -> dict[str, str]:
    """Each option's help line (names → text, unwrapped), `--help` left out."""
    ctx = click.Context(emulate_command, info_name="emulate")
    records = {}
    for param in emulate_command.get_params(ctx):
        if isinstance(param, click.Option) and "--help" not in param.opts:
            record = param.get_help_record(ctx)
            assert record is not None, param.name
            records[record[0]] = record[1]
    return records


def test_every_option_states_its_default() -> None:
    texts = _help_texts()
    assert len(texts) >= 9  # engine, era, preset, concurrency, input/output len, seed, output, truth
    missing = [names for names, text in texts.items() if "[default:" not in text and "[required]" not in text]
    assert missing == []


def test_defaults_stated_are_the_defaults_used() -> None:
    texts = {names.split()[0]: text for names, text in _help_texts().items()}
    assert f"vLLM {VLLM_ERAS[-1].name}, SGLang {SGLANG_ERAS[-1].name}]" in texts["--era"]
    assert "else 8]" in texts["--concurrency"] and "else 4096]" in texts["--input-len"]
    assert "else 1024]" in texts["--output-len"] and "else 0]" in texts["--seed"]


def test_help_lists_the_presets_and_eras() -> None:
    result = CliRunner().invoke(cli, ["emulate", "--help"], terminal_width=1000)
    assert result.exit_code == 0, result.output
    names = [*PRESETS, *(key.split("/", 1)[1] for key in scenarios())]
    assert [n for n in names if n not in result.output] == []
    eras = [e.name for e in (*VLLM_ERAS, *SGLANG_ERAS)]
    assert [e for e in eras if e not in result.output] == []
    for line in result.output.splitlines():
        if line.lstrip().startswith(("--era", "--preset", "--concurrency", "--input-len", "--output-len",
                                     "--seed", "-o, --output", "--truth")):
            assert "[default:" in line, line


def test_every_listed_preset_renders_for_its_engine() -> None:
    engine_of = {key.split("/", 1)[1]: key.split("/", 1)[0] for key in scenarios()}
    for name in ("gpustack-64k", *engine_of):
        engine = engine_of.get(name, "sglang")
        args = ["--engine", engine, "--preset", name, "--output-len", "20", "--concurrency", "2",
                "--input-len", "512"]
        result = CliRunner().invoke(emulate_command, args)
        assert result.exit_code == 0, (name, result.output[-500:])
