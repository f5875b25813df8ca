"""What the columns and marks of `summary` and `windows` mean, and the rules behind them: the text
of `logparse explain [TOPIC]`, kept beside the code it describes (`phases`, `windows`, `summary`,
`evidence`, `prefill`, `spec`). Change both together: `tests/test_explain.py` checks the numbers
quoted here against the code's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from logparse.errors import InputError


@dataclass(frozen=True)
class Topic:
    """One explanation: a name, the spellings that lead to it and its text."""

    name: str
    title: str
    text: str
    aliases: tuple[str, ...] = ()


TOPICS: tuple[Topic, ...] = (
    Topic(
        "window",
        "the stable decode window rule",
        """\
A decode sample (one stats line: vLLM's engine stats, SGLang's Decode batch line) is stable when
all of these hold:

  1. all N requests of the phase run: running == N (see `explain phase` for N);
  2. none waits: waiting == 0 (a line that prints no waiting count counts as 0);
  3. its interval overlaps no prefill: vLLM, the line's prompt throughput is 0; SGLang, no
     Prefill line came since the previous Decode line (so the first Decode line after a prefill
     is out);
  4. it prints a generation throughput above 0 (requests running while nothing is generated
     measure no decoding: a long prompt's prefill held them);
  5. it is not the phase's first sample (its interval starts in the idle time before the phase).

The stable window is an unbroken run of stable samples: consecutive samples of the phase with no
other sample of the phase between them. A phase whose stable samples come in several runs (a
sweep level whose requests are restarted one by one) reports its longest run (of equally long
ones the steadiest, then the first) and says how many runs it had. Its figures are plain
statistics of the printed generation throughput over those samples (what an engineer averaging
the lines by hand gets): see `explain tok/s`, `cv`, `tok/s/req`, `ms/tok`, `secs`. Several series
(data-parallel ranks, vLLM engines) are combined into rounds first, one line of each per round,
and a round's throughput is their sum.

A window is trusted when it has at least --min-samples samples (default 5), covers at least
--min-duration seconds (default 20) and its cv is at most 0.2 (the printed throughput strays
no more than 20% from its mean); otherwise it is still shown, with the note "not trusted: ..."
naming what it lacks, and no ratio or comparison uses it. A phase without a window says why
(e.g. "running never reached N", "requests were always waiting", "every sample with N running
overlapped a prefill").""",
        aliases=("stable", "stable-window", "windows", "rule"),
    ),
    Topic(
        "phase",
        "phases and their concurrency N",
        """\
A run is cut into phases: bursts of load separated by idle time, each burst cut again where its
workload changes. Idle time is

  * a decode sample printing nothing running and nothing waiting, whatever its averaged
    throughput still shows (vLLM's averages trail off over the first idle interval);
  * a silence between activity lines longer than the idle gap (--idle-gap; default:
    vLLM 2.5 stats intervals, SGLang 5, the median interval between samples, at least 20 s;
    vLLM stops printing stats when idle, SGLang prints nothing without work);
  * at least 3 s with no request in flight by the request lines (vLLM's Added / Received and
    Finished request lines, when the server logs requests).

Inside a burst a new phase begins where the running-request plateau changes (a c = 1, 2, 4
sweep is three phases): a plateau is a run of at least 3 samples printing one running count (a
single sample of another count between two runs of it does not break it; SGLang's Prefill lines
add their running count plus the requests they admit, and a plateau needs a Decode line);
the samples between two plateaus go with the later one. A burst is cut this way only when its
plateaus hold at least half of its samples, so a request-rate run's rising and falling load
stays one phase. A new phase also begins where the requests' input length changes more than
2x (SGLang, whose Prefill lines give each request's input). SGLang Prefill lines count as
activity. Lines before the server said it was ready (SGLang's warm-up request) are left out.
`windows` lists under "phase boundaries" how each phase's beginning and end were found.

N, the phase's concurrency, is the plateau of running requests: the largest running count held by
at least 2 samples (else the largest count), or --concurrency when given. Phases are numbered
from 1 in time order; `seg` numbers the engine starts when a log holds several: a new start
begins where the engine prints its configuration again after the last start reached KV allocation,
CUDA graphs, engine init or ready (or loads weights again after it served), or prints its arguments
a second time, later than the first (a start that failed early, relaunched into the same file).""",
        aliases=("phases", "N", "concurrency", "seg"),
    ),
    Topic(
        "start",
        "the start column and +90s",
        """\
`07-28 17:18:48 +90s`: when the phase began (its first activity line's time, year left out) and
how long it lasted, in seconds rounded to whole seconds: from its first to its last activity
line. The window's own duration is `secs`.""",
        aliases=("+90s", "+", "duration", "span"),
    ),
    Topic(
        "input",
        "the input column",
        """\
The input length per request of the phase, in tokens: `64K` is 64 x 1024 when the count is within
2% of a multiple of 1024, else thousands (`195K` for 200,000). SGLang's is exact: the Prefill
lines' new plus cached tokens over the phase's requests. vLLM prints no per-request counts, so
its input is estimated from the prompt throughput x the stats interval / N, marked `~`, with the
bound in the note under the table (see `explain marks`).""",
        aliases=("64K", "K"),
    ),
    Topic(
        "samples",
        "samples and secs",
        """\
samples: how many samples the stable window has (rounds, when several series are combined).
secs: the time the window's samples measure: the sum of their intervals, each from the previous
sample to this one, so the window starts at the sample before its first.""",
        aliases=("secs",),
    ),
    Topic(
        "tok/s",
        "tok/s and min-max",
        """\
tok/s: the plain mean of the engine-printed generation throughput (vLLM `Avg generation
throughput`, SGLang `gen throughput (token/s)`) over the window's samples, all N requests
together. min-max: the smallest and largest of those printed values.""",
        aliases=("tps", "gen_tps", "min-max", "mean"),
    ),
    Topic(
        "tok/s/req",
        "tok/s/req and ms/tok",
        """\
tok/s/req: tok/s divided by N, the decode speed one request sees. ms/tok: 1000 / tok/s/req, the
time between two tokens of one request (inter-token latency as the server's stats give it).""",
        aliases=("per-request", "ms/tok", "ms", "itl"),
    ),
    Topic(
        "cv",
        "the cv column",
        """\
The coefficient of variation of the printed generation throughput over the window: its standard
deviation (population, ddof 0) divided by its mean, to 3 decimals. 0.05 means the samples stray
about 5% from the mean; a small cv is a steady window, a large one a window whose mean hides
swings.""",
        aliases=("variation", "std"),
    ),
    Topic(
        "ctx/req",
        "the ctx/req column",
        """\
The KV context each request holds during the window: the mean over the window's samples of KV
tokens in use / running requests. SGLang prints the tokens in use (`#token`): exact. vLLM prints
the KV usage as a percent to 0.1%, so its tokens are usage x the KV pool size (x engines on an
aggregated line): estimated, marked `~`, with the bound in the note. Left out (with a note) when
it contradicts the phase's input length or exceeds the model's maximum length.""",
        aliases=("ctx", "context", "context_tokens_per_request"),
    ),
    Topic(
        "marks",
        "~, ?, >= and the notes under the tables",
        """\
Every figure is exact, estimated or guessed. Exact: read or computed from printed values only.
`~` estimated: computed through an assumption that can be off by a known amount; the note under
the table says how and within what bound (`± 1,280`). `?` guessed: resting on something the log
does not state (a default block size, intervals nobody measured); the note says from what.
`≥` before "ready after": a lower bound (the ready line prints no time: the last timestamp before
it is used). "(inferred)" after engine init: SGLang prints no init figure, so it is the time from
the end of rank 0's weight loading to ready, by their timestamps. In --json every such figure
carries {"confidence", "how", "bound"} under "evidence".""",
        aliases=("~", "?", "estimated", "guessed", "exact", "evidence", ">=", "≥", "inferred"),
    ),
    Topic(
        "trusted",
        "trusted windows",
        """\
In --json each window has "trusted": true when it has at least --min-samples samples (default 5),
covers at least --min-duration seconds (default 20) and its cv is at most 0.2; else false, with a
"note" such as "not trusted: 3 sample(s), need 5, cv 1.24 above 0.2". The text tables show every
window and print that note below them. See `explain window`.""",
        aliases=("note", "untrusted"),
    ),
    Topic(
        "prefill",
        "the prefill table",
        """\
mean tok/s and max tok/s of a phase's prefill: SGLang, the printed `input throughput` of the
phase's Prefill lines, leaving out the first (measured since the previous Prefill line, across
the idle time before the phase); vLLM, the prompt throughput of the samples that prefilled
(prompt throughput > 0). "first request, chunk by chunk": SGLang's chunked prefill of the phase's
first request, each chunk's input throughput (measured at the next Prefill line).""",
        aliases=("input_tps", "chunks"),
    ),
    Topic(
        "spec",
        "the speculative decoding table",
        """\
Over the phase's stable window when it has one, else the whole phase. accept len: mean tokens
accepted per verify step per request, the bonus token included (vLLM V1 `Mean acceptance
length`; V0: 1 + rate x speculative tokens; SGLang `accept len`). accept %: 100 x the acceptance
rate. wasted %: the share of drafted tokens not accepted (vLLM V1: 100 x (1 - sum of accepted /
sum of drafted throughput); SGLang: drafted and accepted derived from gen throughput and accept
len). SGLang's `accept rate` changed meaning in about 0.5.11; with the number k of draft tokens the
rate is recomputed as (accept len - 1) / k.""",
        aliases=("speculative", "accept", "accept%", "wasted", "wasted%"),
    ),
    Topic(
        "time",
        "times, zones and dates the log does not print",
        """Every line's time is a UTC instant. A stamp with a zone (docker's `...Z`, journald's) is exact. A
stamp without a zone (vLLM, SGLang) is read as UTC unless --tz ZONE names its zone: the same log
gives the same times on every machine, whatever its TZ; ingest, summary, compare, report, gate
and export openmetrics/prometheus all read it so. A stamp without a year (vLLM's MM-DD) takes it
from the log's own full dates, else --year, else the file's modification time, which dates the
last line; a stamp without a date (old SGLang's hh:mm:ss) likewise. A date taken from the file's
modification time is a guess (the file may have been copied or touched since): tables mark it
`?` (`?2026-07-28 17:06`), and the headline's `times` row says where each date came from. When a
wrapper's clock (docker --timestamps, journald) and the engine's own stamps disagree by more than a
second, the summary and the headline warn (`clock_disagreement`): the engine most likely logs in
another zone (pass --tz) or its clock drifts; the wrapper's exact stamp is the one used.""",
        aliases=("tz", "zone", "timezone", "date", "dates", "utc", "clock"),
    ),
)


def topic_names() -> list[str]:
    """The topics, in the order `logparse explain` lists them."""
    return [t.name for t in TOPICS]


def find_topic(name: str) -> Topic:
    """The topic called (or aliased) `name`; `InputError` listing the topics otherwise."""
    wanted = name.strip()
    for topic in TOPICS:
        if wanted == topic.name or wanted in topic.aliases:
            return topic
    lowered = wanted.lower()
    for topic in TOPICS:
        if lowered == topic.name.lower() or lowered in (a.lower() for a in topic.aliases):
            return topic
    raise InputError(f"no topic {name!r}; topics: {', '.join(topic_names())} (or all)")


def explain(name: str | None = None) -> str:
    """The text of a topic; every topic for `all`; the list of topics for None."""
    if name is None:
        width = max(len(t.name) for t in TOPICS)
        lines = ["Topics (logparse explain TOPIC, or all):"]
        lines += [f"  {t.name:<{width}}  {t.title}" for t in TOPICS]
        return "\n".join(lines) + "\n"
    if name.strip().lower() == "all":
        return "\n\n".join(_section(t) for t in TOPICS) + "\n"
    return _section(find_topic(name)) + "\n"


def _section(topic: Topic) -> str:
    return f"{topic.name}: {topic.title}\n\n{topic.text}"
