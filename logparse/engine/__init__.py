"""The compiled core of one engine's grammar (`logparse._core.Core`), built once per grammar.

The core is the one parser of the product: ingest, detection, `patterns check`, drift and the
mining of unknown lines all read lines with it. A grammar with a rule the core cannot run is
refused with the rule's name, the reason and a rewrite hint.
"""

from __future__ import annotations

import json
from typing import Any

from logparse.errors import InputError, PatternError
from logparse.grammar import Grammar

# A rule the Rust `regex` crate cannot run, and how to write it so it can.
REWRITE_HINT = (
    "write it without lookaround, backreferences, conditionals, atomic groups, possessive repeats "
    "and word boundaries (`\\b`): match the text itself, e.g. `(?:, |$)` for a lookahead on a separator"
)

_CORES: dict[tuple[int, str], tuple[Grammar, Any]] = {}


def compiled(grammar: Grammar, engine: str) -> Any:
    """The core compiled for a grammar's engine (cached while the grammar lives). Raises
    `PatternError` when a rule or the envelope does not run in the core."""
    from logparse.engine.spec import build_spec
    from logparse.engine.translate import Untranslatable

    key = (id(grammar), engine)
    found = _CORES.get(key)
    if found is None or found[0] is not grammar:
        try:
            spec = build_spec(grammar, engine)
        except Untranslatable as exc:
            raise PatternError(f"{exc}; {REWRITE_HINT}") from None
        if spec.untranslatable:
            problems = [
                f'rule "{name}": the compiled core cannot run it ({why}); {REWRITE_HINT}'
                for name, why in spec.untranslatable.items()
            ]
            raise PatternError("\n".join(problems), problems)
        found = _CORES[key] = (grammar, core_module().Core(json.dumps(spec.data)))
    return found[1]


def core_module() -> Any:
    """The compiled core, or a clear error when it is not built."""
    try:
        from logparse import _core
    except ImportError as exc:
        raise InputError(
            "logparse's compiled core (logparse._core) is not built: run `make venv` "
            f"(or `maturin develop --release`) in the source tree ({exc})"
        ) from None
    return _core


def core_available() -> bool:
    """Whether the compiled core is built and importable."""
    try:
        from logparse import _core  # noqa: F401
    except ImportError:
        return False
    return True


__all__ = ["REWRITE_HINT", "compiled", "core_available", "core_module"]
