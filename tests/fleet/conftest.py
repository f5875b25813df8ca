"""The fleet tests' Ray, local to this machine: Ray reads this when it is first imported, so it is set
before any module here imports it (its servers then listen on 127.0.0.1, not on every interface)."""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
