"""Paths of the full-length corpus (`fixtures/fulllength/`, sources in its SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "fulllength"
SERVER = CORPUS / "server"
CLIENT = CORPUS / "client"


def server(name: str) -> Path:
    return SERVER / name


def client(name: str) -> Path:
    return CLIENT / name
