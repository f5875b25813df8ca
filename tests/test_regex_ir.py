"""One reading of a grammar regex (`regex_ir.parse_regex`), written for the Rust `regex` crate and for
PCRE2: the constructs each can run, the reason when one cannot, and PCRE2 output that matches what
Python matches (checked with the `regex` module, which reads PCRE2 syntax in V0 mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.engine import REWRITE_HINT, compiled
from logparse.errors import PatternError
from logparse.grammar import build_grammar, builtin_files, load_grammar
from logparse.grammar.regex_ir import (
    Alternation,
    Char,
    CharClass,
    Group,
    Look,
    Repeat,
    Untranslatable,
    parse_regex,
    to_pcre,
    to_rust,
)


def test_the_tree_holds_flags_names_and_repeats() -> None:
    tree = parse_regex(r"(?i:a)(?P<x>b)(?P<x>c)+|d")
    (alt,) = tree.nodes
    assert isinstance(alt, Alternation) and len(alt.branches) == 2
    first, named, repeated = alt.branches[0]
    assert isinstance(first, Group) and first.alias is None
    assert isinstance(first.body[0], Char) and first.body[0].fold
    assert isinstance(named, Group) and (named.alias, named.field) == ("x", "x")
    assert isinstance(repeated, Repeat) and (repeated.lo, repeated.hi) == (1, None)
    inner = repeated.body[0]
    assert isinstance(inner, Group) and (inner.alias, inner.field) == ("x__2", "x")
    assert tree.fields == {"x": ["x", "x__2"]}


def test_ascii_classes_are_explicit_in_both_outputs() -> None:
    tree = parse_regex(r"\d\w\s")
    assert all(isinstance(node, CharClass) for node in tree.nodes)
    assert to_rust(r"\d\w\s").pattern == r"[0-9][0-9A-Za-z_][\t\n\x0B\x0C\r\x20]"
    assert to_pcre(r"\d\w\s").pattern == "[0-9][0-9A-Za-z_][\\t\\x0b\\x0c\\r ]"  # no line end
    assert to_rust("(?i)a").pattern == "[Aa]" == to_pcre("(?i)a").pattern


@pytest.mark.parametrize(
    ("source", "reason", "pcre"),
    [
        (r"a(?=b)", "a lookahead", "a(?=b)"),
        (r"a(?!b)", "a negative lookahead", "a(?!b)"),
        (r"(?<=a)b", "a lookbehind", "(?<=a)b"),
        (r"(?<!a)b", "a negative lookbehind", "(?<!a)b"),
        (r"(?P<x>a)(?P=x)", "a backreference", r"(?<x>a)\k<x>"),
        (r"(?P<x>a)?(?(x)b|c)", "a conditional group", "(?<x>a)?(?(x)b|c)"),
        (r"(?>ab)c", "an atomic group", "(?>ab)c"),
        (r"a++", "a possessive repeat", "a++"),
        (r"\bword", "a word boundary", r"\bword"),
        (r"a{1001}", "counted repetition too large", "a{1001}"),
    ],
)
def test_what_rust_cannot_run_is_named_and_pcre_still_writes(source: str, reason: str, pcre: str) -> None:
    with pytest.raises(Untranslatable, match=reason):
        to_rust(source)
    assert to_pcre(source).pattern == pcre


def test_a_lookahead_is_one_node_for_both() -> None:
    (_, look) = parse_regex(r"a(?=b)").nodes
    assert isinstance(look, Look) and look.ahead and not look.negated
    assert to_pcre(r"a(?=b)").pattern == "a(?=b)"


@pytest.mark.slow
def test_a_user_rule_with_a_lookahead_is_refused_at_load() -> None:
    bad = Path(__file__).parent / "bad_patterns" / "lookahead.toml"
    grammar = build_grammar([*builtin_files(), bad])
    with pytest.raises(PatternError) as caught:
        compiled(grammar, "vllm")
    text = str(caught.value)
    assert 'rule "attention_block_lookahead"' in text and "lookahead.toml" in text
    assert "a lookahead has no Rust equivalent" in text and REWRITE_HINT in text
    compiled(grammar, "sglang")  # the other engine's grammar has no such rule


@pytest.mark.slow
def test_every_shipped_regex_is_written_for_both() -> None:
    grammar = load_grammar()
    sources = [t.pattern for t in grammar.envelope.tokens] + [s.regex.pattern for s in grammar.envelope.stamps]
    for engine in grammar.engines.values():
        sources += [r.regex.pattern for r in engine.rules if hasattr(r, "regex")]
    assert len(sources) > 200
    for source in sources:
        assert to_rust(source).pattern
        assert regex.compile(to_pcre(source).pattern, regex.V0)


# -- PCRE2 output matches what Python matches ----------------------------------------------------
ATOMS = st.sampled_from(
    ["a", "b", "ab", r"\d", r"\w", r"\s", ".", "[a-c]", "[^a]", r"\.", "x", "(?i:b)", "[0-9,]", r"\D", "-", " "]
)


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        choice = draw(st.integers(0, 5 if depth < 2 else 1))
        if choice <= 1:
            part = draw(ATOMS)
        elif choice == 2:
            part = f"(?:{draw(patterns(depth + 1))}|{draw(patterns(depth + 1))})"
        elif choice == 3:
            part = f"(?P<g{draw(st.integers(0, 2))}>{draw(patterns(depth + 1))})"
        elif choice == 4:
            part = f"(?:{draw(patterns(depth + 1))})"
        else:
            part = f"(?:{draw(ATOMS)})"
        parts.append(part + draw(st.sampled_from(["", "", "*", "+", "?", "{1,2}", "*?", "{2}"])))
    return "".join(parts)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(source=patterns(), texts=st.lists(st.text("ab1 ,.-xAB9_\t", max_size=12), min_size=1, max_size=5))
def test_pcre_output_matches_what_python_matches(source: str, texts: list[str]) -> None:
    try:
        python = regex.compile(source, regex.ASCII | regex.V0)
    except regex.error:
        return  # a repeated group name in one branch: not a grammar regex
    written = to_pcre(source)
    pcre = regex.compile(written.pattern, regex.V0)
    for text in texts:
        want, got = python.fullmatch(text), pcre.fullmatch(text)
        assert (want is None) == (got is None), (source, written.pattern, text)
        if want is not None and got is not None:
            for name, field in written.fields.items():
                if written.names_of(field) == [name] and source.count(f"<{field}>") == 1:
                    assert got.group(name) == want.group(field), (source, written.pattern, text, name)
