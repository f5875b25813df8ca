"""The JSON Schema of the grammar files: shipped grammars pass it, misspelt keys fail it, and it allows
exactly the keys the loader accepts."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from logparse.grammar import builtin_files, patterns_dir
from logparse.grammar.load import ALLOWED_KEYS
from logparse.grammar.model import FIELD_TYPES

SCHEMA_PATH = patterns_dir() / "grammar.schema.json"
UNKNOWN_KEY_FIXTURE = Path(__file__).parent / "bad_patterns" / "unknown_key.toml"
DIRECTIVE = "#:schema ./grammar.schema.json"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: jsonschema.Draft202012Validator, path: Path) -> list[str]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]


def test_schema_is_draft_2020_12(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", builtin_files(), ids=lambda p: p.name)
def test_shipped_grammar_validates(validator: jsonschema.Draft202012Validator, path: Path) -> None:
    errors = _errors(validator, path)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("path", builtin_files(), ids=lambda p: p.name)
def test_shipped_grammar_names_its_schema_for_editors(path: Path) -> None:
    assert path.read_text(encoding="utf-8").splitlines()[0] == DIRECTIVE


def test_misspelt_keys_fail_the_schema(validator: jsonschema.Draft202012Validator) -> None:
    text = "\n".join(_errors(validator, UNKNOWN_KEY_FIXTURE))
    for key in ("fallbak", "expected", "partail"):
        assert f"'{key}' was unexpected" in text, text
    # a misspelt key inside a string-or-table value fails every branch of its `oneOf`
    for where in ("rule/1/keys/Running: ", "kinds/misspelt_kind/count: "):
        assert where in text, text


def test_a_stats_key_table_may_not_hold_a_pattern(validator: jsonschema.Draft202012Validator) -> None:
    rule = {"kind": "engine_stats", "title": "T", "first": "a", "sample": [{"line": "T: a: 1"}]}
    good = {"engine": "vllm", "rule": [{**rule, "keys": {"a": {"field": "running"}}}]}
    bad = {"engine": "vllm", "rule": [{**rule, "keys": {"a": {"field": "running", "pattern": "a"}}}]}
    assert not list(validator.iter_errors(good))
    assert list(validator.iter_errors(bad))


def _properties(schema: dict[str, Any], name: str) -> set[str]:
    return set(schema["$defs"][name]["properties"])


@pytest.mark.parametrize("table", sorted(ALLOWED_KEYS))
def test_schema_allows_exactly_the_loader_keys(schema: dict[str, Any], table: str) -> None:
    assert _properties(schema, table) == set(ALLOWED_KEYS[table])


def test_every_schema_table_is_a_loader_table(schema: dict[str, Any]) -> None:
    closed = {name for name, spec in schema["$defs"].items() if spec.get("additionalProperties") is False}
    assert closed == set(ALLOWED_KEYS)


def test_schema_field_types_are_the_model_types(schema: dict[str, Any]) -> None:
    assert set(schema["$defs"]["kind_field"]["properties"]["type"]["enum"]) == set(FIELD_TYPES)


def test_readme_examples_pass_the_schema(validator: jsonschema.Draft202012Validator) -> None:
    readme = (patterns_dir() / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", readme, flags=re.S)
    assert blocks
    for block in blocks:
        data = tomllib.loads(block.replace("line = '...'", "line = 'x'"))
        data.setdefault("engine", "vllm")
        errors = [e.message for e in validator.iter_errors(data)]
        assert not errors, f"{errors}\n{block}"
