"""How much worse a metric may get before the gate fails: `--threshold METRIC=PCT` and a TOML file.

The file is a team's own set, e.g. ``gate.toml``::

    [thresholds]
    default = 5          # percent, in each metric's bad direction
    decode_tps = 3
    ttft_p90_ms = 10

Command-line thresholds win over the file's, the file's over the default of 5 %.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from logparse.errors import InputError
from logparse.gate.metrics import BY_KEY, DEFAULT_THRESHOLD_PCT

DEFAULT_KEY = "default"


@dataclass(frozen=True)
class Thresholds:
    """Percent per metric in its bad direction, and the one for every other metric."""

    default_pct: float = DEFAULT_THRESHOLD_PCT
    by_metric: Mapping[str, float] = field(default_factory=dict)

    def pct(self, key: str) -> float:
        """The threshold of metric `key`, in percent."""
        return self.by_metric.get(key, self.default_pct)

    def source(self, key: str) -> str:
        """Where the threshold of `key` comes from: `default` or `set`."""
        return "set" if key in self.by_metric else "default"


def _checked(key: str, value: object, where: str) -> float:
    if key != DEFAULT_KEY and key not in BY_KEY:
        known = ", ".join(sorted(BY_KEY))
        raise InputError(f"{where}: unknown metric {key!r}; known: {DEFAULT_KEY}, {known}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where}: the threshold of {key} must be a number of percent, not {value!r}")
    if value < 0:
        raise InputError(f"{where}: the threshold of {key} must be 0 or more percent, not {value}")
    return float(value)


def parse_option(text: str) -> tuple[str, float]:
    """`decode_tps=3` (or `decode_tps=3%`) as (metric, percent); InputError when malformed."""
    key, sep, pct = text.partition("=")
    where = f"--threshold {text}"
    if not sep or not key.strip():
        raise InputError(f"{where}: expected METRIC=PCT, e.g. decode_tps=3")
    try:
        value = float(pct.strip().removesuffix("%"))
    except ValueError:
        raise InputError(f"{where}: {pct.strip()!r} is not a number of percent") from None
    return key.strip(), _checked(key.strip(), value, where)


def load_file(path: Path) -> dict[str, float]:
    """The ``[thresholds]`` table of a TOML file, checked."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a valid TOML file ({exc})") from None
    table = data.get("thresholds")
    if not isinstance(table, dict):
        raise InputError(f"{path}: expected a [thresholds] table of METRIC = PCT")
    return {key: _checked(key, value, str(path)) for key, value in table.items()}


def thresholds(options: Sequence[str] = (), file: Path | None = None) -> Thresholds:
    """The thresholds of a gate: the default, then `file`'s, then the `options` (`METRIC=PCT`)."""
    merged: dict[str, float] = {}
    if file is not None:
        merged.update(load_file(file))
    merged.update(parse_option(text) for text in options)
    default = merged.pop(DEFAULT_KEY, DEFAULT_THRESHOLD_PCT)
    return Thresholds(default_pct=default, by_metric=merged)


__all__ = ["Thresholds", "load_file", "parse_option", "thresholds"]
