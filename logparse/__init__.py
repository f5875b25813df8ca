"""logparse: turn vLLM and SGLang server logs into typed tables and post-mortems."""
from __future__ import annotations

__all__ = ["ingest", "__version__"]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    if name == "ingest":
        from logparse.ingest import ingest

        return ingest
    raise AttributeError(name)
