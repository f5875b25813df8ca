"""OpenMetrics text of metric series: one family per metric name, samples with their timestamps.

The text follows the OpenMetrics 1.0 exposition format that `promtool tsdb create-blocks-from
openmetrics` reads: each family once (`# TYPE`, `# HELP`, then its samples), counter samples named
`<family>_total`, every sample stamped in seconds since the epoch, samples of a series in time
order, and a closing `# EOF`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from logparse.export.series import Labels, Series


def render(series: Iterable[Series], *, timestamps: bool = True) -> Iterator[str]:
    """The OpenMetrics text of `series`, line by line (each ending in a newline); without
    `timestamps`, samples are left unstamped (a live `/metrics` page: the scrape stamps them)."""
    families: dict[str, list[Series]] = {}
    for one in series:
        families.setdefault(one.name, []).append(one)
    for name in sorted(families):
        members = sorted(families[name], key=lambda s: s.labels)
        first = members[0]
        yield f"# TYPE {name} {first.type}\n"
        yield f"# HELP {name} {_escape(first.help)}\n"
        sample_name = f"{name}_total" if first.type == "counter" else name
        for member in members:
            labels = _labels(member.labels)
            for t_ms, value in member.samples:
                stamp = f" {_seconds(t_ms)}" if timestamps else ""
                yield f"{sample_name}{labels} {_number(value)}{stamp}\n"
    yield "# EOF\n"


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{key}="{_escape(value)}"' for key, value in labels) + "}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _seconds(t_ms: int) -> str:
    whole, ms = divmod(t_ms, 1000)
    return str(whole) if ms == 0 else f"{whole}.{ms:03d}"
