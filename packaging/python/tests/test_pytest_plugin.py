"""The pytest plugin, run through pytest's own pytester.

Each inner run uses one cheap scenario (eof-inflight) with a fixed seed, so that
a run takes about a second: what is tested is the plugin's plumbing (set-up
errors against failures, messages, files, options), not mcpchaos's judgement.
"""

import json
from pathlib import Path
from typing import List

import pytest

FAST = 'scenario="eof-inflight", seed=1'


def marked_test(command: List[str], extra: str = "", body: str = "pass", fixture: str = "mcpchaos_report") -> str:
    """An inner test module with one marked test."""
    args = f"command={command!r}, {FAST}" + (f", {extra}" if extra else "")
    return f"""
import pytest

@pytest.mark.mcpchaos({args})
def test_server({fixture}):
    {body}
"""


def test_clean_server_passes(pytester: pytest.Pytester, serve: List[str]) -> None:
    pytester.makepyfile(marked_test(serve, body="assert mcpchaos_report.outcome == 'pass'"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 mcpchaos run, 0 with failing findings; reports in *"])


def test_planted_bug_fails_with_the_finding(pytester: pytest.Pytester, tiny: List[str], tmp_path: Path) -> None:
    pytester.makepyfile(marked_test([*tiny, "--stdout-log"]))
    result = pytester.runpytest("--mcpchaos-report-dir", str(tmp_path))
    # a failure of the test (call phase), not an error of its set-up
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mcpchaos found 1 failing finding testing * (seed 1; 1 error, 0 warnings):",
            "protocol-violation error ?baseline? rule not-an-mcp-message",
            "  non-JSON on stdout: *",
            "  evidence: seq *, received s2c at *",
            "    | debug: echo 'mcpchaos'",
            "  repro: mcpchaos test --scenario baseline --seed 1 -- *tiny_server.py --stdout-log",
            f"report: {tmp_path}*test_server.json",
            f"html:   {tmp_path}*test_server.html",
        ]
    )
    assert "ERROR at setup" not in result.stdout.str()


def test_report_files_are_kept(pytester: pytest.Pytester, serve: List[str], tmp_path: Path) -> None:
    pytester.makepyfile(test_one=marked_test(serve))
    result = pytester.runpytest("--mcpchaos-report-dir", str(tmp_path / "reports"))
    result.assert_outcomes(passed=1)
    name = "test_one.py_test_server"
    report = json.loads((tmp_path / "reports" / f"{name}.json").read_text())
    assert report["schema"] == "mcpchaos.report/v1"
    assert report["seed"] == 1
    assert [s["name"] for s in report["scenarios"]] == ["eof-inflight"]
    assert "<html" in (tmp_path / "reports" / f"{name}.html").read_text().lower()
    assert (tmp_path / "reports" / f"{name}.transcripts").is_dir()


def test_default_report_dir_is_under_basetemp(pytester: pytest.Pytester, tiny: List[str]) -> None:
    pytester.makepyfile(marked_test([*tiny, "--stdout-log"]))
    basetemp = pytester.path / "basetemp"
    result = pytester.runpytest(f"--basetemp={basetemp}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"report: {basetemp / 'mcpchaos'}*.json"])
    assert list((basetemp / "mcpchaos").glob("*.json"))


def test_server_that_cannot_start_errors_at_setup(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(marked_test(["/nonexistent/mcp-server"]))
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_server*",
            "mcpchaos could not test /nonexistent/mcp-server (exit status 2):",
            "*cannot start*",
        ]
    )


def test_server_that_dies_at_start_errors_at_setup(pytester: pytest.Pytester, tiny: List[str]) -> None:
    pytester.makepyfile(marked_test([tiny[0], "-c", "raise SystemExit(3)"]))
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*does not start or initialize*"])


def test_missing_binary_errors_at_setup(pytester: pytest.Pytester, serve: List[str]) -> None:
    pytester.makepyfile(marked_test(serve))
    result = pytester.runpytest("--mcpchaos-binary", str(pytester.path / "no-such-mcpchaos"))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*mcpchaos could not run: the mcpchaos binary * does not exist*"])


def test_marker_needs_a_target(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.mcpchaos(seed=1)
        def test_nothing():
            pass

        @pytest.mark.mcpchaos(command=["x"], sedd=1)
        def test_typo():
            pass

        def test_fixture_without_marker(mcpchaos_report):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*needs command=* (a stdio server) or url=...",
            "*has no keyword sedd (it takes command, url, *",
            "*the mcpchaos_report fixture needs @pytest.mark.mcpchaos*",
        ]
    )


def test_disabled_with_p_no_mcpchaos(pytester: pytest.Pytester, tiny: List[str], tmp_path: Path) -> None:
    pytester.makepyfile(marked_test([*tiny, "--stdout-log"], fixture=""))
    on = pytester.runpytest("--mcpchaos-report-dir", str(tmp_path / "on"))
    on.assert_outcomes(failed=1)
    off = pytester.runpytest("-p", "no:mcpchaos")
    off.assert_outcomes(passed=1)  # the marker is an unknown mark now, the test runs alone
    assert "mcpchaos run" not in off.stdout.str()
    help_on = pytester.runpytest("--help").stdout.str()
    help_off = pytester.runpytest("-p", "no:mcpchaos", "--help").stdout.str()
    assert "--mcpchaos-binary" in help_on and "--mcpchaos-binary" not in help_off
    markers_off = pytester.runpytest("-p", "no:mcpchaos", "--markers").stdout.str()
    assert "@pytest.mark.mcpchaos" not in markers_off


def test_marker_alone_runs_mcpchaos(pytester: pytest.Pytester, tiny: List[str]) -> None:
    pytester.makepyfile(marked_test([*tiny, "--stdout-log"], fixture=""))
    pytester.runpytest().assert_outcomes(failed=1)


def test_warnings_fail_only_when_strict(pytester: pytest.Pytester, tiny: List[str]) -> None:
    lossy = [*tiny, "--exit-at-eof"]
    pytester.makepyfile(test_lax=marked_test(lossy), test_strict=marked_test(lossy, "strict=True"))
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_lax.py::test_server PASSED*", "*test_strict.py::test_server FAILED*"])
    result.stdout.fnmatch_lines(["*(seed 1; 0 errors, 1 warning, strict):", "lost-response warning ?eof-inflight?*"])
    pytester.runpytest("--mcpchaos-strict").assert_outcomes(failed=2)


def test_ini_strict(pytester: pytest.Pytester, tiny: List[str]) -> None:
    pytester.makeini("[pytest]\nmcpchaos_strict = true\n")
    pytester.makepyfile(marked_test([*tiny, "--exit-at-eof"]))
    pytester.runpytest().assert_outcomes(failed=1)


def test_body_checks_the_report_itself(pytester: pytest.Pytester, tiny: List[str]) -> None:
    body = "assert [f['rule'] for f in mcpchaos_report.errors] == ['not-an-mcp-message']"
    pytester.makepyfile(marked_test([*tiny, "--stdout-log"], "check=False", body=body))
    pytester.runpytest().assert_outcomes(passed=1)


def test_body_failure_wins(pytester: pytest.Pytester, tiny: List[str]) -> None:
    pytester.makepyfile(marked_test([*tiny, "--stdout-log"], body="assert 1 == 2, 'the body says no'"))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the body says no*"])


def test_options_override_the_marker(pytester: pytest.Pytester, serve: List[str], tmp_path: Path) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.mcpchaos(command={serve!r}, scenario="stall-s2c", seed=5)
        def test_server(mcpchaos_report):
            assert mcpchaos_report.seed == 7
            assert [s["name"] for s in mcpchaos_report["scenarios"]] == ["eof-inflight", "half-close-s2c"]
        """
    )
    result = pytester.runpytest(
        "--mcpchaos-seed", "7", "--mcpchaos-scenario", "eof-inflight", "--mcpchaos-scenario", "half-close-s2c"
    )
    result.assert_outcomes(passed=1)


def test_ini_fills_in(pytester: pytest.Pytester, serve: List[str]) -> None:
    pytester.makeini(
        "[pytest]\nmcpchaos_seed = 11\nmcpchaos_scenarios =\n    eof-inflight\nmcpchaos_args = --deadline 3s\n"
    )
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.mcpchaos(command={serve!r})
        def test_server(mcpchaos_report):
            assert mcpchaos_report.seed == 11
            assert "--deadline" in mcpchaos_report.argv
            assert [s["name"] for s in mcpchaos_report["scenarios"]] == ["eof-inflight"]
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_function_fixture(pytester: pytest.Pytester, tiny: List[str], serve: List[str]) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        def test_computed(mcpchaos):
            clean = mcpchaos.test(command={serve!r}, scenario="eof-inflight", seed=1)
            mcpchaos.assert_clean(clean)
            buggy = mcpchaos.test(command={[*tiny, "--stdout-log"]!r}, scenario="eof-inflight", seed=1)
            assert buggy.path != clean.path and buggy.path.exists()
            assert [f["rule"] for f in buggy.errors] == ["not-an-mcp-message"]
            mcpchaos.assert_clean(buggy)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mcpchaos found 1 failing finding*", "protocol-violation error*"])


def test_relative_command_runs_in_the_test_files_directory(pytester: pytest.Pytester, tiny: List[str]) -> None:
    sub = pytester.mkpydir("sub")
    (sub / "server.py").write_text(Path(tiny[1]).read_text())
    (sub / "test_here.py").write_text(marked_test([tiny[0], "server.py"]))
    pytester.runpytest(str(sub)).assert_outcomes(passed=1)
