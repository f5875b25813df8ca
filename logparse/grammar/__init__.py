"""Grammars as data: `patterns/*.toml` loaded into immutable objects (see `model`).

`load_grammar()` is what the parser and the CLI use; `build_grammar(files)` loads an explicit list
(tests, `logparse patterns check FILE`).
"""

from __future__ import annotations

from logparse.grammar.load import (
    PATTERNS_ENV,
    build_grammar,
    builtin_files,
    load_grammar,
    patterns_dir,
    user_pattern_files,
)
from logparse.grammar.model import (
    ADDED_COLUMNS,
    COMMON_FIELDS,
    FIELD_TYPES,
    REGEX_FLAGS,
    UNPARSED,
    AnyRule,
    ColumnDoc,
    Container,
    Derived,
    EngineGrammar,
    Envelope,
    FieldType,
    Grammar,
    Rule,
    Sample,
    Stamp,
    StatsKey,
    StatsRule,
    Token,
)

__all__ = [
    "ADDED_COLUMNS",
    "COMMON_FIELDS",
    "FIELD_TYPES",
    "PATTERNS_ENV",
    "REGEX_FLAGS",
    "UNPARSED",
    "AnyRule",
    "ColumnDoc",
    "Container",
    "Derived",
    "EngineGrammar",
    "Envelope",
    "FieldType",
    "Grammar",
    "Rule",
    "Sample",
    "Stamp",
    "StatsKey",
    "StatsRule",
    "Token",
    "build_grammar",
    "builtin_files",
    "load_grammar",
    "patterns_dir",
    "user_pattern_files",
]
