"""mcpchaos: a chaos man-in-the-middle for the Model Context Protocol.

The program is the Go binary this wheel installs next to Python (run it as
``mcpchaos`` or ``python -m mcpchaos``). This package finds it, runs it from
Python (:func:`run_test`) and, through :mod:`mcpchaos.pytest_plugin`, from pytest.
"""

from ._binary import (
    McpChaosError,
    VersionMismatchError,
    check_binary_version,
    find_mcpchaos_bin,
)
from ._version import __version__
from .runner import Finding, Report, run_test

__all__ = [
    "Finding",
    "McpChaosError",
    "Report",
    "VersionMismatchError",
    "__version__",
    "check_binary_version",
    "find_mcpchaos_bin",
    "run_test",
]
