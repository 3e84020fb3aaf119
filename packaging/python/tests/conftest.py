"""Set-up for the plugin's tests: pytester, the binary, and the plugin's entry point.

Run against the installed wheel (scripts/test-python-package) the package and its
``pytest11`` entry point are there already, and the binary is found as a user's
would be. Run from a checkout (``MCPCHAOS_BINARY=... pytest packaging/python/tests``)
the package is imported from source, and a stand-in dist-info declares the entry
point, so that pytest loads the plugin exactly as an install makes it, by its
name ``mcpchaos`` (which ``-p no:mcpchaos`` refers to).
"""

import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import List

import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent
TINY_SERVER = HERE / "tiny_server.py"


def _entry_point_installed() -> bool:
    if sys.version_info >= (3, 10):
        from importlib.metadata import entry_points

        return any(ep.name == "mcpchaos" for ep in entry_points(group="pytest11"))
    from importlib.metadata import entry_points as eps  # 3.9: a dict of groups

    return any(ep.name == "mcpchaos" for ep in eps().get("pytest11", []))


if importlib.util.find_spec("mcpchaos") is None:
    sys.path.insert(0, str(HERE.parent))
if not _entry_point_installed():
    _site = Path(tempfile.mkdtemp(prefix="mcpchaos-entry-point-"))
    _info = _site / "mcpchaos-0.0.0.dev0.dist-info"
    _info.mkdir()
    (_info / "METADATA").write_text("Metadata-Version: 2.1\nName: mcpchaos\nVersion: 0.0.0.dev0\n")
    (_info / "entry_points.txt").write_text("[pytest11]\nmcpchaos = mcpchaos.pytest_plugin\n")
    sys.path.insert(0, str(_site))

from mcpchaos import find_mcpchaos_bin  # noqa: E402  (after the path set-up above)


@pytest.fixture(scope="session")
def binary() -> str:
    """The binary under test: $MCPCHAOS_BINARY, else the installed one."""
    return find_mcpchaos_bin()


@pytest.fixture
def serve(binary: str) -> List[str]:
    """The bundled example server, clean under every scenario."""
    return [binary, "serve"]


@pytest.fixture
def tiny() -> List[str]:
    """The tiny Python server; add --stdout-log or --exit-at-eof to plant a bug."""
    return [sys.executable, str(TINY_SERVER)]


def pytest_report_header(config: pytest.Config) -> str:
    """Which package and binary the tests run against (an install or a checkout)."""
    import mcpchaos

    try:
        binary = find_mcpchaos_bin()
    except FileNotFoundError as e:
        binary = f"none ({e})"
    return f"mcpchaos package: {Path(mcpchaos.__file__).parent} {mcpchaos.__version__}; binary: {binary}"
