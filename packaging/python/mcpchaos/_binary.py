"""Finding the mcpchaos binary this package ships, and checking it is the right one.

The wheel carries the Go binary as a *script* (``mcpchaos-<v>.data/scripts/mcpchaos``),
so pip puts it in the environment's ``bin`` (``Scripts`` on Windows) next to the
Python interpreter, not inside the package: this module looks there first, as
ruff's ``find_ruff_bin`` does, so that the binary of *this* environment wins over
another one earlier on ``$PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from typing import Dict, List, Optional

from ._version import __version__

#: The version a source checkout carries; a wheel's ``_version.py`` replaces it.
#: The version check is skipped for it, since a checkout pairs with any binary.
DEV_VERSION = "0.0.0.dev0"

#: Set to a path to use that binary instead of the one installed with the package.
BINARY_ENV = "MCPCHAOS_BINARY"

_INSTALL_HINT = "install it with `pip install mcpchaos` (or run `uvx mcpchaos`), or point $MCPCHAOS_BINARY at a binary"


class McpChaosError(RuntimeError):
    """mcpchaos could not test its target: no binary, a bad flag, a server that cannot start."""


class VersionMismatchError(McpChaosError):
    """The binary found is not the version this Python package was released with."""


def _exe_name() -> str:
    return "mcpchaos" + (sysconfig.get_config_var("EXE") or (".exe" if os.name == "nt" else ""))


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def _candidates() -> List[str]:
    """The places pip may have put the binary, most specific first."""
    exe = _exe_name()
    dirs = [sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=_user_scheme()))
    except KeyError:  # a Python built without the user scheme
        pass
    # `pip install --target DIR` puts scripts in DIR/bin, next to the package.
    dirs.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"))
    return [os.path.join(d, exe) for d in dirs if d]


def find_mcpchaos_bin() -> str:
    """Return the path of the mcpchaos binary to run.

    In order: ``$MCPCHAOS_BINARY``; the scripts directory of the running
    environment (where ``pip install mcpchaos`` put it), then of the user scheme
    (``pip install --user``) and of ``pip install --target``; then ``$PATH``.
    Raises FileNotFoundError, saying how to install it, when there is none.
    """
    explicit = os.environ.get(BINARY_ENV)
    if explicit:
        if not os.path.isfile(explicit):
            raise FileNotFoundError(
                f"${BINARY_ENV} is {explicit!r}, which is not a file: unset it or point it at a binary"
            )
        return explicit
    for path in _candidates():
        if os.path.isfile(path):
            return path
    found = shutil.which("mcpchaos")
    if found:
        return found
    raise FileNotFoundError(
        "cannot find the mcpchaos binary (looked in "
        + ", ".join(os.path.dirname(p) for p in _candidates())
        + " and $PATH): "
        + _INSTALL_HINT
    )


_PEP440 = re.compile(
    r"""^v?(?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre>a|alpha|b|beta|c|rc|pre|preview)[-_.]?(?P<pre_n>\d*))?
    (?:[-_.]?(?P<post>post|rev|r)[-_.]?(?P<post_n>\d*))?
    (?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d*))?
    (?:\+(?P<local>[a-z0-9.\-_]+))?$""",
    re.VERBOSE,
)
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}


def normalize_version(version: str) -> str:
    """Spell a version as PEP 440 does, so that the binary's semver (``0.2.0-rc.1``)
    matches the wheel's version (``0.2.0rc1``); a version it cannot parse stays as is."""
    v = version.strip().lower()
    m = _PEP440.match(v)
    if not m:
        return v
    release = ".".join(str(int(p)) for p in m["release"].split("."))
    out = release
    if m["pre"]:
        out += _PRE[m["pre"]] + str(int(m["pre_n"] or 0))
    if m["post"]:
        out += ".post" + str(int(m["post_n"] or 0))
    if m["dev"]:
        out += ".dev" + str(int(m["dev_n"] or 0))
    if m["local"]:
        out += "+" + re.sub(r"[-_]", ".", m["local"])
    return out


def binary_version(binary: str) -> str:
    """The version ``binary version`` prints on its first line (``mcpchaos 0.2.0``)."""
    try:
        out = subprocess.run(
            [binary, "version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, check=False
        )
    except OSError as e:
        raise McpChaosError(f"cannot run {binary}: {e}") from e
    first = out.stdout.decode("utf-8", "replace").splitlines()[:1]
    words = first[0].split() if first else []
    if out.returncode != 0 or len(words) < 2 or words[0] != "mcpchaos":
        raise McpChaosError(
            f"{binary} is not an mcpchaos binary: `{binary} version` exited {out.returncode} "
            f"and printed {first[0] if first else 'nothing'!r}"
        )
    return words[1]


_checked: Dict[str, str] = {}


def check_binary_version(binary: str, expected: Optional[str] = None) -> None:
    """Raise VersionMismatchError when ``binary`` is not the release this package is.

    The wheel pairs this Python code with one binary; a different binary (a stale
    one earlier on $PATH, a half-upgraded environment) may not take the flags this
    code passes, and would fail in confusing ways. A source checkout (version
    0.0.0.dev0) pairs with any binary, so it is not checked. Each binary is run
    once per process.
    """
    want = expected if expected is not None else __version__
    if want == DEV_VERSION:
        return
    got = _checked.get(binary)
    if got is None:
        got = _checked[binary] = binary_version(binary)
    if normalize_version(got) != normalize_version(want):
        raise VersionMismatchError(
            f"the mcpchaos binary {binary} is version {got}, but the mcpchaos Python package is "
            f"version {want}: reinstall the package (`pip install --force-reinstall mcpchaos=={want}`), "
            f"or set ${BINARY_ENV} to a {want} binary"
        )


def resolve_binary(binary: Optional[str] = None) -> str:
    """The binary to run: ``binary`` or ``$MCPCHAOS_BINARY`` as given, else the
    one installed with this package, version-checked.

    A binary named explicitly is a deliberate choice (a local build, another
    release) and is not version-checked; one found by looking is, since finding
    the wrong one (a stale copy earlier on $PATH) is the mistake the check is for.
    """
    if binary:
        path = binary if os.path.isfile(binary) else shutil.which(binary)
        if not path:
            raise FileNotFoundError(f"the mcpchaos binary {binary!r} does not exist")
        return path
    if os.environ.get(BINARY_ENV):
        return find_mcpchaos_bin()
    path = find_mcpchaos_bin()
    check_binary_version(path)
    return path
