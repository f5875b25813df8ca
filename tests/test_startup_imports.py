"""Start-up: the command line and its help load none of the heavy libraries (polars, pyarrow,
altair); they are imported by the commands that use them, when those run. Not timed: which
modules are loaded is what decides the time, and it does not depend on the machine's load."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

HEAVY = ("polars", "pyarrow", "altair")
PROBE = "import sys\n{code}\nprint('loaded:', *(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)"


def _heavy_loaded(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stderr.splitlines()[-1].split()[1:]


@pytest.mark.parametrize(
    "code",
    [
        "import logparse",
        "import logparse.cli",
        # `logparse --help` and `--version`, as the console script runs them
        "from logparse.cli import cli\ntry: cli.main(['--help'], prog_name='logparse')\nexcept SystemExit: pass",
        "from logparse.cli import cli\ntry: cli.main(['--version'], prog_name='logparse')\nexcept SystemExit: pass",
    ],
)
def test_the_command_line_loads_no_heavy_library(code: str) -> None:
    assert _heavy_loaded(code) == []


def test_the_probe_sees_a_heavy_import() -> None:  # the check above can fail
    assert _heavy_loaded("import logparse.cli; import polars") == ["polars"]


def test_version_is_the_installed_packages() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "logparse", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.split()[-1] == importlib.metadata.version("logparse")
