"""Envelope kinds users' logs arrive in, each a function wrapping a real engine line (`line`: the
line as the engine printed it) or a real message (`body`: the engine's message, its own envelope
removed) in the layer a logging stack adds. The wrapped text is invented; the bodies never are.

`WHOLE_LINE` wrappers keep the engine's own envelope inside (its `ts`, `rank`, `pid` survive);
`BODY` wrappers replace it with another logging format, at the record's level (only the message's
fields survive).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# One instant, 2026-05-12 08:01:39.331095044 UTC, as each layer prints it
STAMP_ISO_Z = "2026-05-12T08:01:39.331095044Z"
STAMP_MS_Z = "2026-05-12T08:01:39.331Z"
STAMP_EPOCH_MS = 1778572899331
STAMP_SYSLOG = "May 12 08:01:39"
STAMP_PY = "2026-05-12 08:01:39,331"
STAMP_LOGURU = "2026-05-12 08:01:39.331"
STAMP_TIME = "08:01:39"


def go_json(record: dict[str, Any]) -> str:
    """A record as Go's encoding/json.Marshal prints it (docker, Loki): compact, UTF-8 kept, and
    `<`, `>`, `&`, U+2028, U+2029 escaped (Go's HTML-safe default)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text


def docker_json(line: str) -> str:
    # moby daemon/logger/jsonfilelog: {"log":...,"stream":...,"time":...}, the newline kept in `log`
    return go_json({"log": line + "\n", "stream": "stdout", "time": STAMP_ISO_Z})


def cri(line: str) -> str:
    return f"{STAMP_ISO_Z} stdout F {line}"


def docker_timestamps(line: str) -> str:
    return f"{STAMP_ISO_Z} {line}"


def journald(line: str) -> str:
    return f"{STAMP_SYSLOG} gpu-node-3 python3[4242]: {line}"


def syslog_5424(line: str) -> str:
    return f"<14>1 {STAMP_MS_Z} gpu-node-3 vllm 4242 - - {line}"


def srun_label(line: str) -> str:
    return f"3: {line}"


def kubectl_prefix(line: str) -> str:
    return f"[pod/inference-7d9f8c6b5-x2x4q/server] {line}"


def compose(line: str) -> str:
    return f"inference-1  | {line}"


def loki_json(line: str) -> str:
    # logcli --output=jsonl: json.Marshal of a map (keys sorted), time.Time as RFC 3339 with ns
    return go_json(
        {
            "labels": {"app": "inference", "pod": "inference-7d9f8c6b5-x2x4q"},
            "line": line,
            "timestamp": STAMP_ISO_Z,
        }
    )


def gcp_json(line: str) -> str:
    # A Cloud Logging LogEntry as an export sink writes it (one compact object a line, keys sorted);
    # `receiveTimestamp` is the collector's, later than `timestamp`
    return json.dumps(
        {
            "insertId": "1x2y3z4w5v6u7t",
            "logName": "projects/p/logs/stdout",
            "receiveTimestamp": "2026-05-12T08:01:41.512345678Z",
            "resource": {"labels": {"container_name": "server"}, "type": "k8s_container"},
            "severity": "INFO",
            "textPayload": line,
            "timestamp": STAMP_ISO_Z,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def cloudwatch_json(line: str) -> str:
    # One event of `aws logs filter-log-events` (jq -c '.events[]'): epoch milliseconds
    return json.dumps(
        {
            "logStreamName": "inference/server/0a1b2c",
            "timestamp": STAMP_EPOCH_MS,
            "message": line,
            "ingestionTime": STAMP_EPOCH_MS + 812,
            "eventId": "3829103",
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def mpirun_tag(line: str) -> str:
    return f"[1,3]<stdout>:{line}"


def mpirun_prrte_tag(line: str) -> str:
    # Open MPI 5 (PRRTE) --output tag: the namespace "prterun-<host>-<pid>@<jobid>" and a blank
    return f"[prterun-gpu-node-3-4242@1,3]<stdout>: {line}"


def ts_moreutils(line: str) -> str:
    return f"{STAMP_SYSLOG} {line}"


def stern(line: str) -> str:
    return f"inference-7d9f8c6b5-x2x4q server {line}"


def py_dash(body: str, level: str = "INFO") -> str:
    return f"{STAMP_PY} - sglang.srt.managers.scheduler - {level} - {body}"


def py_bracket(body: str, level: str = "INFO") -> str:
    return f"[{STAMP_PY}] [{level}] vllm.engine.metrics: {body}"


def py_default(body: str, level: str = "INFO") -> str:
    return f"{level}:vllm.v1.metrics.loggers:{body}"


def py_pid_file(body: str, level: str = "INFO") -> str:
    return f"{STAMP_PY} {level} 4242 [scheduler.py:1553] {body}"


def loguru(body: str, level: str = "INFO") -> str:
    return f"{STAMP_LOGURU} | {level:<8} | inference.server:log_stats:88 - {body}"


def json_logger(body: str, level: str = "INFO") -> str:
    return json.dumps({"asctime": STAMP_PY, "levelname": level, "name": "inference", "message": body})


def time_only(body: str, level: str = "INFO") -> str:
    return f"[{STAMP_TIME}] {level} {body}"


WHOLE_LINE: dict[str, Callable[[str], str]] = {
    f.__name__: f
    for f in (
        docker_json,
        cri,
        docker_timestamps,
        journald,
        syslog_5424,
        srun_label,
        kubectl_prefix,
        compose,
        loki_json,
        gcp_json,
        cloudwatch_json,
        mpirun_tag,
        mpirun_prrte_tag,
        ts_moreutils,
        stern,
    )
}
BODY: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (py_dash, py_bracket, py_default, py_pid_file, loguru, json_logger, time_only)
}


@dataclass(frozen=True)
class Prints:
    """What a wrapper itself prints that the parser should read: its stamp (as printed), whether
    that stamp is an exact instant (a zone or an epoch: it gives `time`), a level, a pid, a
    scheduler's task label."""

    stamp: str | None = None
    exact: bool = False
    level: str | None = None
    pid: int | None = None
    task: str | None = None


INSTANT = dt.datetime(2026, 5, 12, 8, 1, 39, 331095, tzinfo=dt.UTC)
INSTANT_MS = INSTANT.replace(microsecond=331000)
PRINTS: dict[str, Prints] = {
    "docker_json": Prints(STAMP_ISO_Z, exact=True),
    "cri": Prints(STAMP_ISO_Z, exact=True),
    "docker_timestamps": Prints(STAMP_ISO_Z, exact=True),
    "journald": Prints(STAMP_SYSLOG),
    "syslog_5424": Prints(STAMP_MS_Z, exact=True),
    "srun_label": Prints(task="3"),
    "kubectl_prefix": Prints(),
    "compose": Prints(),
    "loki_json": Prints(STAMP_ISO_Z, exact=True),
    "gcp_json": Prints(STAMP_ISO_Z, exact=True, level="INFO"),
    "cloudwatch_json": Prints(str(STAMP_EPOCH_MS), exact=True),
    "mpirun_tag": Prints(task="3"),
    "mpirun_prrte_tag": Prints(task="3"),
    "ts_moreutils": Prints(STAMP_SYSLOG),
    "stern": Prints(),
    "py_dash": Prints(STAMP_PY),
    "py_bracket": Prints(STAMP_PY),
    "py_default": Prints(),
    "py_pid_file": Prints(STAMP_PY, pid=4242),
    "loguru": Prints(STAMP_LOGURU),
    "json_logger": Prints(STAMP_PY),
    "time_only": Prints(STAMP_TIME),
}


def instant_of(name: str) -> dt.datetime | None:
    """The UTC instant an exact wrapper stamp stands for (milliseconds where it prints only those)."""
    prints = PRINTS[name]
    if not prints.exact:
        return None
    return INSTANT if prints.stamp == STAMP_ISO_Z else INSTANT_MS
