"""Envelope kinds users' logs arrive in, each a function wrapping a real engine line (`line`: the
line as the engine printed it) or a real message (`body`: the engine's message, its own envelope
removed) in the layer a logging stack adds. The wrapped text is invented; the bodies never are.

`WHOLE_LINE` wrappers keep the engine's own envelope inside (its `ts`, `rank`, `pid` survive);
`BODY` wrappers replace it with another logging format, at the record's level (only the message's
fields survive).
"""
from __future__ import annotations

import json
from collections.abc import Callable

STAMP_ISO_Z = "2026-05-12T08:01:39.331095044Z"
STAMP_PY = "2026-05-12 08:01:39,331"


def docker_json(line: str) -> str:
    return json.dumps({"log": line + "\n", "stream": "stdout", "time": STAMP_ISO_Z})


def cri(line: str) -> str:
    return f"{STAMP_ISO_Z} stdout F {line}"


def docker_timestamps(line: str) -> str:
    return f"{STAMP_ISO_Z} {line}"


def journald(line: str) -> str:
    return f"May 12 08:01:39 gpu-node-3 python3[4242]: {line}"


def syslog_5424(line: str) -> str:
    return f"<14>1 2026-05-12T08:01:39.331Z gpu-node-3 vllm 4242 - - {line}"


def srun_label(line: str) -> str:
    return f"3: {line}"


def kubectl_prefix(line: str) -> str:
    return f"[pod/inference-7d9f8c6b5-x2x4q/server] {line}"


def compose(line: str) -> str:
    return f"inference-1  | {line}"


def loki_json(line: str) -> str:
    return json.dumps({"timestamp": STAMP_ISO_Z, "labels": {"app": "inference"}, "line": line})


def gcp_json(line: str) -> str:
    return json.dumps({"textPayload": line, "timestamp": STAMP_ISO_Z, "severity": "INFO",
                       "resource": {"type": "k8s_container"}})


def cloudwatch_json(line: str) -> str:
    return json.dumps({"timestamp": 1778573299331, "message": line, "ingestionTime": 1778573300000})


def mpirun_tag(line: str) -> str:
    return f"[1,3]<stdout>:{line}"


def ts_moreutils(line: str) -> str:
    return f"May 12 08:01:39 {line}"


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
    return f"2026-05-12 08:01:39.331 | {level:<8} | inference.server:log_stats:88 - {body}"


def json_logger(body: str, level: str = "INFO") -> str:
    return json.dumps({"asctime": STAMP_PY, "levelname": level, "name": "inference", "message": body})


def time_only(body: str, level: str = "INFO") -> str:
    return f"[08:01:39] {level} {body}"


WHOLE_LINE: dict[str, Callable[[str], str]] = {
    f.__name__: f for f in (docker_json, cri, docker_timestamps, journald, syslog_5424, srun_label, kubectl_prefix,
                            compose, loki_json, gcp_json, cloudwatch_json, mpirun_tag, ts_moreutils, stern)
}
BODY: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (py_dash, py_bracket, py_default, py_pid_file, loguru, json_logger, time_only)
}
