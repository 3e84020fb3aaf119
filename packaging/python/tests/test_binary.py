"""Finding the binary, its version check, python -m mcpchaos, and run_test."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import List

import pytest

import mcpchaos
from mcpchaos import _binary
from mcpchaos._binary import (
    DEV_VERSION,
    McpChaosError,
    VersionMismatchError,
    binary_version,
    check_binary_version,
    find_mcpchaos_bin,
    normalize_version,
)


@pytest.mark.parametrize(
    "given, want",
    [
        ("0.2.0", "0.2.0"),
        ("v0.2.0", "0.2.0"),
        ("0.2.0-rc.1", "0.2.0rc1"),
        ("0.2.0rc1", "0.2.0rc1"),
        ("0.2.0-beta.2", "0.2.0b2"),
        ("0.1.0-dev", "0.1.0.dev0"),
        ("1.0.0+abc", "1.0.0+abc"),
        ("nonsense", "nonsense"),
    ],
)
def test_normalize_version(given: str, want: str) -> None:
    assert normalize_version(given) == want


def fake_binary(tmp_path: Path, first_line: str) -> str:
    """A stand-in binary whose `version` prints first_line."""
    path = tmp_path / "mcpchaos"
    path.write_text(f"#!/bin/sh\necho '{first_line}'\necho 'commit unknown'\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for the binary")
def test_version_mismatch_names_both_versions_and_the_fix(tmp_path: Path) -> None:
    old = fake_binary(tmp_path, "mcpchaos 0.1.0")
    with pytest.raises(VersionMismatchError) as e:
        check_binary_version(old, expected="0.2.0")
    msg = str(e.value)
    assert "is version 0.1.0" in msg and "package is version 0.2.0" in msg
    assert "pip install --force-reinstall mcpchaos==0.2.0" in msg
    check_binary_version(old, expected="0.1.0")
    check_binary_version(old, expected=DEV_VERSION)  # a checkout pairs with any binary


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for the binary")
def test_not_an_mcpchaos_binary(tmp_path: Path) -> None:
    with pytest.raises(McpChaosError, match="is not an mcpchaos binary"):
        binary_version(fake_binary(tmp_path, "ruff 0.5.0"))


def test_the_binary_prints_its_version_first(binary: str) -> None:
    version = binary_version(binary)
    assert version[0].isdigit()
    if mcpchaos.__version__ != DEV_VERSION:  # an installed wheel: its binary is its release
        check_binary_version(binary)
        assert normalize_version(version) == normalize_version(mcpchaos.__version__)


def test_env_var_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chosen = tmp_path / "my-mcpchaos"
    chosen.write_text("")
    monkeypatch.setenv("MCPCHAOS_BINARY", str(chosen))
    assert find_mcpchaos_bin() == str(chosen)
    monkeypatch.setenv("MCPCHAOS_BINARY", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="MCPCHAOS_BINARY"):
        find_mcpchaos_bin()


def test_scripts_dir_before_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    scripts, elsewhere = tmp_path / "scripts", tmp_path / "elsewhere"
    for d in (scripts, elsewhere):
        d.mkdir()
        exe = d / ("mcpchaos" + (sysconfig.get_config_var("EXE") or ""))
        exe.write_text("")
        exe.chmod(0o755)
    monkeypatch.delenv("MCPCHAOS_BINARY", raising=False)
    monkeypatch.setenv("PATH", str(elsewhere))
    monkeypatch.setattr(_binary, "_candidates", lambda: [str(scripts / "mcpchaos")])
    assert find_mcpchaos_bin() == str(scripts / "mcpchaos")
    monkeypatch.setattr(_binary, "_candidates", lambda: [])
    assert find_mcpchaos_bin() == str(elsewhere / "mcpchaos")


def test_not_found_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MCPCHAOS_BINARY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_binary, "_candidates", lambda: [str(tmp_path / "bin" / "mcpchaos")])
    with pytest.raises(FileNotFoundError, match=r"pip install mcpchaos"):
        find_mcpchaos_bin()


def test_python_dash_m(binary: str) -> None:
    # the package's parent dir, for a run from a checkout (an install has it already)
    pkg_parent = str(Path(mcpchaos.__file__).resolve().parent.parent)
    pythonpath = os.pathsep.join(p for p in (pkg_parent, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "MCPCHAOS_BINARY": binary, "PYTHONPATH": pythonpath}
    out = subprocess.run(
        [sys.executable, "-m", "mcpchaos", "version"], env=env, stdout=subprocess.PIPE, check=True, text=True
    )
    assert out.stdout.startswith("mcpchaos ")
    bad = subprocess.run(
        [sys.executable, "-m", "mcpchaos", "no-such-command"], env=env, stderr=subprocess.PIPE, text=True
    )
    assert bad.returncode == 2 and "unknown command" in bad.stderr


def test_run_test(serve: List[str], tiny: List[str], tmp_path: Path) -> None:
    clean = mcpchaos.run_test(serve, scenario="eof-inflight", seed=1, report=tmp_path / "clean.json")
    assert clean.ok and clean.outcome == "pass" and clean.returncode == 0
    assert clean["schema"] == "mcpchaos.report/v1" and clean.path == tmp_path / "clean.json"
    assert clean.html_path == tmp_path / "clean.html" and clean.html_path.exists()
    buggy = mcpchaos.run_test(
        [*tiny, "--stdout-log"], scenario=["eof-inflight"], seed=1, report=tmp_path / "buggy.json", html=False
    )
    assert not buggy.ok and buggy.returncode == 1 and buggy.html_path is None
    assert [f["rule"] for f in buggy.errors] == ["not-an-mcp-message"] and buggy.warnings == []
    assert "debug: echo 'mcpchaos'" in buggy.describe()
    with pytest.raises(McpChaosError, match="exit status 2"):
        mcpchaos.run_test(["/nonexistent/server"], report=tmp_path / "none.json")
    with pytest.raises(TypeError, match="list of arguments"):
        mcpchaos.run_test("python server.py", report=tmp_path / "str.json")  # type: ignore[arg-type]


def test_run_test_over_http_on_a_port_for_each_run(serve: List[str], tmp_path: Path) -> None:
    # {port} in url and in the command: each run's server on a port of its own.
    report = mcpchaos.run_test(
        [*serve, "--http", "127.0.0.1:{port}"],
        url="http://127.0.0.1:{port}/mcp",
        scenario=["cut-inflight", "unknown-session"],
        seed=1,
        report=tmp_path / "http.json",
    )
    assert report.ok and report.outcome == "pass", report.describe()
    assert report["target"]["url"] == "http://127.0.0.1:{port}/mcp"
    assert [s["name"] for s in report["scenarios"]] == ["cut-inflight", "unknown-session"]


def test_run_test_timeout_stops_mcpchaos_and_its_server(tiny: List[str], tmp_path: Path) -> None:
    tag = f"--tag-{os.getpid()}-{tmp_path.name}"  # tiny_server ignores it; it names the process
    with pytest.raises(McpChaosError, match=r"did not finish in 0.5s"):
        mcpchaos.run_test([*tiny, tag], report=tmp_path / "slow.json", timeout=0.5)
    if sys.platform.startswith("linux"):
        left = [p for p in Path("/proc").glob("[0-9]*/cmdline") if tag.encode() in _read(p)]
        assert left == [], "the server outlived the timed-out run"


def _read(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except OSError:  # the process ended meanwhile
        return b""
