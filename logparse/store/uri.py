"""Which argument is a URI of a store (`s3://bucket/key`, `file:///tmp/x`) rather than a local path."""

from __future__ import annotations

import re

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")


def is_uri(text: object) -> bool:
    """Whether `text` is a URI with a scheme (`s3://bucket/key`, `file:///tmp/x`), not a path."""
    return isinstance(text, str) and _SCHEME.match(text) is not None


def scheme_of(uri: str) -> str:
    """The URI's scheme, lower case (`s3`); empty for a path."""
    found = _SCHEME.match(uri)
    return found.group(1).lower() if found else ""
