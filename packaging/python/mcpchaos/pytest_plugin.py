"""The mcpchaos pytest plugin: test an MCP server under faults as a pytest test.

Registered by the wheel's ``pytest11`` entry point (``mcpchaos``), so installing
the package is enough; ``-p no:mcpchaos`` turns it off. Two ways in::

    @pytest.mark.mcpchaos(command=[sys.executable, "server.py"])
    def test_server_survives_faults(mcpchaos_report):
        pass

    def test_computed(mcpchaos):
        report = mcpchaos.test(command=[sys.executable, str(build_server())])
        mcpchaos.assert_clean(report)

The marked form runs mcpchaos while the test is SET UP: a server that cannot
start, or no binary, is a set-up *error* (the test could not run), while the
server's findings make the test *fail* after its body ran (the server is
broken). The two mean different things to whoever reads the result, as mcpchaos's
exit statuses 2 and 1 do.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pytest

from ._binary import McpChaosError
from .runner import Report, run_test

if int(pytest.__version__.split(".")[0]) < 7:  # StashKey, Item.path and the public types came in 7.0
    raise ImportError(
        f"the mcpchaos pytest plugin needs pytest 7.0 or later, not {pytest.__version__}: "
        "upgrade pytest, or turn the plugin off with -p no:mcpchaos"
    )

MARKER = "mcpchaos"

#: The keywords ``@pytest.mark.mcpchaos(...)`` takes.
MARKER_KEYWORDS = (
    "command",
    "url",
    "scenario",
    "seed",
    "deadline",
    "strict",
    "args",
    "cwd",
    "env",
    "timeout",
    "check",
)

_REPORT = pytest.StashKey[Report]()
_CHECK = pytest.StashKey[bool]()
_RUNS = pytest.StashKey[List[Report]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcpchaos", "mcpchaos: MCP servers under fault injection")
    group.addoption(
        "--mcpchaos-binary",
        metavar="PATH",
        help="the mcpchaos binary to run (default: $MCPCHAOS_BINARY, else the one installed with the package)",
    )
    group.addoption(
        "--mcpchaos-report-dir",
        metavar="DIR",
        help="keep each run's JSON and HTML reports in DIR (default: under pytest's basetemp)",
    )
    group.addoption(
        "--mcpchaos-seed",
        type=int,
        metavar="N",
        help="seed every run with N, over the marker's and the ini's seed (to replay a failure)",
    )
    group.addoption(
        "--mcpchaos-scenario",
        action="append",
        metavar="NAME",
        help="run only this scenario, over the marker's and the ini's (repeatable; see `mcpchaos scenarios`)",
    )
    group.addoption(
        "--mcpchaos-strict",
        action="store_true",
        default=False,
        help="warning findings fail tests too",
    )
    parser.addini("mcpchaos_binary", "the mcpchaos binary to run (relative to the rootdir)", default="")
    parser.addini(
        "mcpchaos_report_dir", "keep mcpchaos's reports in this directory (relative to the rootdir)", default=""
    )
    parser.addini(
        "mcpchaos_seed", "the seed of runs whose marker names none (default: random, in the report)", default=""
    )
    parser.addini(
        "mcpchaos_scenarios", "the scenarios of runs whose marker names none (default: the matrix)", type="linelist"
    )
    parser.addini(
        "mcpchaos_deadline", "how long a request may stay unanswered, as mcpchaos's --deadline (5s)", default=""
    )
    parser.addini("mcpchaos_strict", "warning findings fail tests too", type="bool", default=False)
    parser.addini("mcpchaos_args", "more mcpchaos test flags for every run (e.g. --parallel 4)", type="args")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcpchaos(command=[...], url=None, scenario=None, seed=None, deadline=None, strict=None, args=[], "
        "cwd=None, env=None, timeout=None, check=True): run `mcpchaos test` against this MCP server while the "
        "test is set up (the mcpchaos_report fixture holds the report); error findings fail the test, "
        "warnings too with strict",
    )
    config.stash[_RUNS] = []


class McpChaos:
    """The ``mcpchaos`` fixture: runs mcpchaos with the session's options, each
    run's reports in the report directory under this test's name."""

    def __init__(self, config: pytest.Config, node: pytest.Item, report_dir: Path) -> None:
        self._config = config
        self._node = node
        self.report_dir = report_dir
        self._runs = 0

    def _ini(self, name: str) -> Any:
        return self._config.getini(name)

    def _report_path(self) -> Path:
        self._runs += 1
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", self._node.nodeid).strip("_")[-150:] or "test"
        if self._runs > 1:
            name += f"-{self._runs}"
        return self.report_dir / f"{name}.json"

    def test(
        self,
        command: Optional[Sequence[str]] = None,
        *,
        url: Optional[str] = None,
        scenario: Union[None, str, Sequence[str]] = None,
        seed: Optional[int] = None,
        deadline: Union[None, str, float] = None,
        strict: Optional[bool] = None,
        args: Sequence[str] = (),
        cwd: Union[None, str, "os.PathLike[str]"] = None,
        env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Report:
        """Run ``mcpchaos test`` against ``command`` (a stdio server's argv) or
        ``url``, and return its :class:`~mcpchaos.Report`; findings do not raise
        (pass the report to :meth:`assert_clean`). Relative paths in ``command``
        are relative to ``cwd``, by default the test file's directory.

        ``--mcpchaos-seed`` and ``--mcpchaos-scenario`` override ``seed`` and
        ``scenario``; the ini options fill in what is not given. Raises
        :class:`~mcpchaos.McpChaosError` when mcpchaos cannot test the target.
        """
        opt = self._config.option
        if opt.mcpchaos_seed is not None:
            seed = opt.mcpchaos_seed
        elif seed is None and self._ini("mcpchaos_seed"):
            seed = int(self._ini("mcpchaos_seed"))
        if opt.mcpchaos_scenario:
            scenario = list(opt.mcpchaos_scenario)
        elif scenario is None and self._ini("mcpchaos_scenarios"):
            scenario = list(self._ini("mcpchaos_scenarios"))
        if deadline is None and self._ini("mcpchaos_deadline"):
            deadline = self._ini("mcpchaos_deadline")
        if opt.mcpchaos_strict:
            strict = True
        elif strict is None:
            strict = bool(self._ini("mcpchaos_strict"))
        binary = opt.mcpchaos_binary or None
        if binary is None and self._ini("mcpchaos_binary"):
            binary = str(self._config.rootpath / self._ini("mcpchaos_binary"))
        report = run_test(
            command,
            url=url,
            scenario=scenario,
            seed=seed,
            deadline=deadline,
            strict=strict,
            args=[*self._ini("mcpchaos_args"), *args],
            report=self._report_path(),
            binary=binary,
            cwd=Path(cwd) if cwd is not None else self._node.path.parent,
            env=env,
            timeout=timeout,
        )
        self._node.user_properties.append(("mcpchaos_report", str(report.path)))
        self._config.stash[_RUNS].append(report)
        return report

    @staticmethod
    def assert_clean(report: Report) -> None:
        """Fail the test when the report has failing findings (errors; warnings in
        strict mode), with each finding's scenario, message, evidence and repro."""
        __tracebackhide__ = True
        if not report.ok:
            pytest.fail(report.describe(), pytrace=False)


@pytest.fixture
def mcpchaos(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> McpChaos:
    """Run mcpchaos from a test: ``mcpchaos.test(command=[...]) -> Report``, then
    ``mcpchaos.assert_clean(report)``."""
    config = request.config
    chosen = config.option.mcpchaos_report_dir
    if chosen:
        report_dir = config.invocation_params.dir / chosen
    elif config.getini("mcpchaos_report_dir"):
        report_dir = config.rootpath / config.getini("mcpchaos_report_dir")
    else:
        report_dir = tmp_path_factory.getbasetemp() / "mcpchaos"
    return McpChaos(config, request.node, report_dir)


def _marker_kwargs(item: pytest.Item) -> Dict[str, Any]:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        raise pytest.UsageError(
            f"{item.nodeid}: the mcpchaos_report fixture needs @pytest.mark.mcpchaos(command=[...] or url=...)"
        )
    if marker.args:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.mcpchaos takes keywords only, e.g. command=[sys.executable, 'server.py']"
        )
    unknown = sorted(set(marker.kwargs) - set(MARKER_KEYWORDS))
    if unknown:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.mcpchaos has no keyword {', '.join(unknown)} "
            f"(it takes {', '.join(MARKER_KEYWORDS)})"
        )
    if not marker.kwargs.get("command") and not marker.kwargs.get("url"):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.mcpchaos needs command=[...] (a stdio server) or url=...")
    return dict(marker.kwargs)


@pytest.fixture
def mcpchaos_report(request: pytest.FixtureRequest, mcpchaos: McpChaos) -> Report:
    """The report of the run ``@pytest.mark.mcpchaos(...)`` describes, made while
    the test is set up. The test fails after its body when the report has failing
    findings (unless the marker says ``check=False``); the body may look at the
    report first, or do its own checks."""
    item: pytest.Item = request.node
    try:
        kwargs = _marker_kwargs(item)
    except pytest.UsageError as e:
        problem = str(e)
    else:
        problem = ""
    if problem:
        pytest.fail(problem, pytrace=False)
    check = bool(kwargs.pop("check", True))
    problem = ""
    try:
        report = mcpchaos.test(**kwargs)
    except McpChaosError as e:
        problem = str(e)
    except (FileNotFoundError, TypeError) as e:
        problem = f"mcpchaos could not run: {e}"
    if problem:  # failed outside the except block, so that no chained traceback shows
        pytest.fail(problem, pytrace=False)
    item.stash[_REPORT] = report
    item.stash[_CHECK] = check
    return report


@pytest.fixture(autouse=True)
def _mcpchaos_marked(request: pytest.FixtureRequest) -> None:
    """A marked test runs mcpchaos whether or not it asks for the report."""
    if request.node.get_closest_marker(MARKER) is not None:
        request.getfixturevalue("mcpchaos_report")


@pytest.hookimpl(trylast=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """After the test body passed (pytest's own call hook runs first, and a body
    that raised stops the hook there), fail the test on the marked run's findings,
    so that they are a failure of the test and not an error of its set-up."""
    report = item.stash.get(_REPORT, None)
    if report is not None and item.stash.get(_CHECK, True) and not report.ok:
        pytest.fail(report.describe(), pytrace=False)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    runs = config.stash.get(_RUNS, [])
    if not runs:
        return
    failing = [r for r in runs if not r.ok]
    dirs = sorted({str(r.path.parent) for r in runs})
    terminalreporter.write_sep("-", "mcpchaos")
    plural = "" if len(runs) == 1 else "s"
    terminalreporter.write_line(
        f"{len(runs)} mcpchaos run{plural}, {len(failing)} with failing findings; reports in {', '.join(dirs)}"
    )
