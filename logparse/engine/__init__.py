"""The compiled core of one engine's grammar (`logparse._core.Core`), built once per grammar.

The core is the one parser of the product: ingest, detection, `patterns check`, drift, the mining
of unknown lines and the lnav export all read lines with it (tooling in one `parse_lines` call per
batch of lines). A grammar with a rule the core cannot run is refused with the rule's name, the
reason and a rewrite hint; without a built core every reader stops with one clear error.

Why the Python reference parser (`logparse.parse`, 1.1 k lines mirroring `core/src/` module for
module) was deleted rather than kept under `tests/` as a differential oracle: it was the oracle
while the core was being written, and it did its job: on all 139 corpus logs the core ingest gave
tables, counts, read statistics, time facts and extra keys identical to the old pipeline, in UTC
and America/New_York. Kept, every grammar feature and every envelope fix would have to be written
twice and kept in step by hand, for a second opinion that only says "the two agree", not "this is
right". What says that is kept: the goldens (`fixtures/**/*.events`), every rule's real sample
lines with their expected values (`patterns check`), the labelled real corpora scored by
conformance, and the property tests (one event per line, envelope stacks, round trips).
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import TYPE_CHECKING, Any

from logparse.errors import InputError, PatternError
from logparse.grammar import Grammar

if TYPE_CHECKING:
    from logparse._core import Core
    from logparse.engine.spec import Spec

# A rule the Rust `regex` crate cannot run, and how to write it so it can.
REWRITE_HINT = (
    "write it without lookaround, backreferences, conditionals, atomic groups, possessive repeats "
    "and word boundaries (`\\b`): match the text itself, e.g. `(?:, |$)` for a lookahead on a separator"
)

_CORES: dict[tuple[int, str], tuple[Grammar, Core]] = {}


def compiled(grammar: Grammar, engine: str) -> Core:
    """The core compiled for a grammar's engine (cached while the grammar lives). Raises
    `PatternError` when a rule or the envelope does not run in the core."""
    key = (id(grammar), engine)
    found = _CORES.get(key)
    if found is None or found[0] is not grammar:
        spec = engine_spec(grammar, engine)
        if spec.untranslatable:
            files = {rule.name: rule.file for rule in grammar.engines[engine].rules}
            problems = [
                f'{files[name]}: rule "{name}": {refusal(why)}' for name, why in spec.untranslatable.items()
            ]
            raise PatternError("\n".join(problems), problems)
        found = _CORES[key] = (grammar, core_of(spec))
    return found[1]


def engine_spec(grammar: Grammar, engine: str) -> Spec:
    """The core's grammar for an engine; `PatternError` when the envelope does not run in the core
    (the rules it cannot run are listed in `Spec.untranslatable`)."""
    from logparse.engine.spec import build_spec
    from logparse.grammar.regex_ir import Untranslatable

    try:
        return build_spec(grammar, engine)
    except Untranslatable as exc:
        raise PatternError(f"{exc}; {REWRITE_HINT}") from None


def core_of(spec: Spec) -> Core:
    """A core of a spec as it stands: the rules it cannot run are not in it (`patterns check`
    reads the other rules' samples with it; `compiled` refuses such a grammar)."""
    core: Core = core_module().Core(json.dumps(spec.data))
    return core


def core_text(text: str) -> str:
    """`text` as the core can take it: a lone surrogate (which no decoded log holds, but a Python
    string may) as U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def convert(text: str, field_type: str) -> Any:
    """A captured text typed as the core types a rule's field (None: it does not read as that
    type)."""
    return core_module().convert(text, field_type)


def refusal(why: str) -> str:
    """Why the core refuses a rule, and how to write it so that it runs."""
    return f"the compiled core cannot run it ({why}); {REWRITE_HINT}"


def core_module() -> ModuleType:
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


__all__ = [
    "REWRITE_HINT",
    "compiled",
    "convert",
    "core_available",
    "core_module",
    "core_of",
    "engine_spec",
    "refusal",
]
