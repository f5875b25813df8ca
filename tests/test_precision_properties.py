"""Precision: a stats line whose title the grammar does not know is `unparsed`, never a known kind.

A stats rule reads a title and then `key: value` pairs; many families share keys (`#running-req`,
`token usage`, `Running`). A line whose title words are not the rule's, with the same pairs after
them (SGLang 0.1.17's `Prefil batch.` typo, a title of a newer version), must not be typed as some
other family because its keys look alike. Here every title word of every stats rule is mutated in
the rule's own sample lines (one letter changed, dropped, doubled or swapped) and the lines are
ingested: each must come out `unparsed` or as the kind of the rule it was mutated from (a body
that is still that family's, after words the envelope does not explain), never another kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_corpus import events_by_line

from logparse.grammar import load_grammar
from logparse.grammar.model import StatsRule

_GROUP_NAME = re.compile(r"\(\?P<\w+>")
_CLASS = re.compile(r"\[[^\]]*\]")
_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass(frozen=True)
class TitleWord:
    """One title word of a stats rule, where it stands in one of the rule's sample lines."""

    engine: str
    rule: str
    kind: str
    line: str
    start: int
    word: str

    def mutated(self, word: str) -> str:
        return self.line[: self.start] + word + self.line[self.start + len(self.word) :]


def _title_words(rule: StatsRule) -> list[str]:
    """The words a rule's title prints (its literal letters), or its first keys' when it has none."""
    text = _CLASS.sub(" ", _GROUP_NAME.sub("(", rule.title))
    words = _WORD.findall(text.replace("\\", " \\"))
    words = [w for w in words if not re.fullmatch(r"[a-z]", w)]
    return words or [w for key in rule.first for w in _WORD.findall(key)]


def _cases() -> list[TitleWord]:
    cases: list[TitleWord] = []
    for engine, grammar in load_grammar().engines.items():
        for rule in grammar.rules:
            if not isinstance(rule, StatsRule):
                continue
            for sample in rule.samples:
                opening = [(sample.line.find(k + ": "), k) for k in rule.first if k + ": " in sample.line]
                if not opening:
                    continue
                at, key = min(opening)
                for word in _title_words(rule):
                    # the last occurrence before the pairs (or in their first key, for a rule without
                    # title words): the title's, not the envelope's
                    head = sample.line[: at + len(key)]
                    spots = [
                        m.start() for m in re.finditer(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", head)
                    ]
                    if spots:
                        cases.append(TitleWord(engine, rule.name, rule.kind, sample.line, spots[-1], word))
    return cases


CASES = _cases()


def _known_words(engine: str) -> set[str]:
    return {
        w
        for rule in load_grammar().engines[engine].rules
        if isinstance(rule, StatsRule)
        for w in _title_words(rule)
    }


def _typed(tmp: Path, engine: str, lines: list[str]) -> list[str]:
    log = tmp / f"mutated-{engine}.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    events = events_by_line(log, engine)
    return [events[i + 1][0] for i in range(len(lines))]


def _edits(word: str) -> set[str]:
    """Every word one letter away: a letter dropped, doubled, swapped with the next, or changed."""
    out: set[str] = set()
    for i, ch in enumerate(word):
        out.add(word[:i] + word[i + 1 :])
        out.add(word[:i] + ch + word[i:])
        if i + 1 < len(word):
            out.add(word[:i] + word[i + 1] + ch + word[i + 2 :])
        other = "x" if ch.lower() != "x" else "q"
        out.add(word[:i] + (other.upper() if ch.isupper() else other) + word[i + 1 :])
    out.discard(word)
    return out


def _check(tmp: Path, mutations: list[tuple[TitleWord, str]]) -> None:
    wrong: list[str] = []
    for engine in sorted({case.engine for case, _ in mutations}):
        known = _known_words(engine)
        batch = [(case, word) for case, word in mutations if case.engine == engine and word not in known]
        kinds = _typed(tmp, engine, [case.mutated(word) for case, word in batch])
        for (case, word), kind in zip(batch, kinds):
            if kind not in ("unparsed", case.kind):
                wrong.append(
                    f"{case.rule}: {case.word!r} -> {word!r} typed {kind}: {case.mutated(word)[:160]}"
                )
    assert not wrong, "\n".join(wrong)


def test_every_stats_rule_with_samples_has_title_words_to_mutate() -> None:
    covered = {(c.engine, c.rule) for c in CASES}
    rules = {
        (engine, rule.name)
        for engine, grammar in load_grammar().engines.items()
        for rule in grammar.rules
        if isinstance(rule, StatsRule) and rule.samples
    }
    assert covered == rules


def test_sglang_0_1_17_prefil_typo_is_not_a_decode_batch(tmp_path: Path) -> None:
    # the 0.1.17 format (managers/router/model_rpc.py) around the keys of the real 0.1.x line of
    # https://github.com/sgl-project/sglang/issues/393; no public paste of the typo was found
    lines = [
        "[gpu_id=0] Prefil batch. #new-seq: 1, #new-token: 20, #cached-token: 0, cache hit rate: 0.00%, #running-req: 0, #queue-req: 0",
        "Prefil batch. #new-seq: 1, #new-token: 20, #cached-token: 0, cache hit rate: 0.00%, #running-req: 3, #token: 1442, token usage: 0.18, #queue-req: 0",
        "#running-req: 3, #token: 1442, token usage: 0.18, #queue-req: 0",
    ]
    assert _typed(tmp_path, "sglang", lines) == ["unparsed", "unparsed", "decode_batch"]


def test_one_letter_off_every_title_word_is_never_another_kind(tmp_path: Path) -> None:
    mutations = [(case, word) for case in CASES for word in sorted(_edits(case.word))]
    assert len(mutations) > 1000  # the check is not vacuous
    _check(tmp_path, mutations)


_LETTERS = st.characters(min_codepoint=ord("a"), max_codepoint=ord("z"))


@st.composite
def _mutation(draw: st.DrawFn) -> tuple[TitleWord, str]:
    case = draw(st.sampled_from(CASES))
    letters = list(case.word)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(letters) - 1))
        edit = draw(st.sampled_from(["change", "drop", "insert", "case"]))
        if edit == "change":
            letters[i] = draw(_LETTERS)
        elif edit == "drop" and len(letters) > 1:
            del letters[i]
        elif edit == "insert":
            letters.insert(i, draw(_LETTERS))
        else:
            letters[i] = letters[i].swapcase()
    return case, "".join(letters)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_mutation(), min_size=1, max_size=40))
def test_mutated_title_words_never_give_another_kind(
    tmp_path: Path, mutations: list[tuple[TitleWord, str]]
) -> None:
    _check(tmp_path, [(case, word) for case, word in mutations if word != case.word])
