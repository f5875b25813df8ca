"""What the analysis CLI tests share: a run of the CLI that must end without a traceback, and an
empty log."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from logparse.cli import cli


def invoke(*args: str) -> Result:
    """Run `logparse ARGS`; whatever its exit status, no traceback may reach the user."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def empty_log(tmp_path: Path) -> Path:
    """An empty file."""
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    return path
