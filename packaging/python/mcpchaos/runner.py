"""Run ``mcpchaos test`` from Python and read its report.

This is the plain API under the pytest plugin, for scripts and other test
runners: :func:`run_test` runs the binary once, with a JSON and an HTML report,
and returns the parsed JSON report as a :class:`Report`. It raises
:class:`McpChaosError` only when mcpchaos could not test the target (exit status
2: a bad flag, a server that does not start or initialize), so that "the server
is broken" and "the test is set up wrong" stay apart, as the CLI keeps them apart.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from ._binary import McpChaosError, resolve_binary

PathLike = Union[str, "os.PathLike[str]"]
#: One finding of the report, as the JSON has it: ``kind``, ``severity``
#: (``error``/``warning``), ``rule``, ``scenario``, ``seed``, ``message``,
#: ``request``, ``evidence`` (a list of ``seq``, ``t_us``, ``type``, ``dir``,
#: ``excerpt``), ``repro``, ``expected``; see docs/reports.md.
Finding = Dict[str, Any]

SCHEMA = "mcpchaos.report/v1"

# The longest a run may take when the caller sets no timeout, as the Node
# API's default: a run never blocks without a deadline, even if mcpchaos
# itself were to hang.
DEFAULT_TIMEOUT = 15 * 60.0


class Report(Mapping[str, Any]):
    """A ``mcpchaos.report/v1`` report: the parsed JSON (read it as a dict) plus
    what the run around it was (the files, the exit status, the command).

    ``errors`` and ``warnings`` leave out findings the report marks expected (a
    scenario file's expectations, ``--baseline`` entries), as the CLI's exit
    status does; ``findings`` has them all.
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        path: Path,
        *,
        html_path: Optional[Path] = None,
        returncode: int = 0,
        output: str = "",
        argv: Sequence[str] = (),
        cwd: Optional[Path] = None,
        strict: bool = False,
    ) -> None:
        if data.get("schema") != SCHEMA:
            raise McpChaosError(f"{path} is not a {SCHEMA} report (schema {data.get('schema')!r})")
        self._data: Dict[str, Any] = dict(data)
        #: The JSON report file.
        self.path = path
        #: The HTML rendering, with a timeline of each failing scenario.
        self.html_path = html_path
        #: mcpchaos's exit status: 0 nothing to report, 1 findings.
        self.returncode = returncode
        #: What mcpchaos printed on stdout: the terminal summary.
        self.output = output
        #: The mcpchaos command that was run, and where.
        self.argv = list(argv)
        self.cwd = cwd
        #: Whether warnings fail this run, as ``--strict`` makes them.
        self.strict = strict

    @classmethod
    def load(cls, path: PathLike, **kwargs: Any) -> "Report":
        """Read a report file (one a run wrote earlier, or a merged one)."""
        p = Path(path)
        with p.open(encoding="utf-8") as f:
            return cls(json.load(f), p, **kwargs)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"<Report {self.outcome} {len(self.errors)} error(s) {len(self.warnings)} warning(s) {str(self.path)!r}>"

    @property
    def outcome(self) -> str:
        """``pass``, or ``fail`` when there are error findings."""
        return str(self._data.get("outcome", ""))

    @property
    def seed(self) -> Optional[int]:
        return self._data.get("seed")

    @property
    def findings(self) -> List[Finding]:
        """Every finding, expected ones included."""
        return list(self._data.get("findings") or [])

    def _unexpected(self, severity: str) -> List[Finding]:
        return [f for f in self.findings if f.get("severity") == severity and not f.get("expected")]

    @property
    def errors(self) -> List[Finding]:
        """The error findings that fail the run."""
        return self._unexpected("error")

    @property
    def warnings(self) -> List[Finding]:
        """The warning findings (they fail the run in strict mode only)."""
        return self._unexpected("warning")

    @property
    def stale_baseline(self) -> List[Dict[str, Any]]:
        """``--baseline`` entries that no longer fail: they fail the run until removed."""
        return list(self._data.get("stale_baseline") or [])

    @property
    def failures(self) -> List[Finding]:
        """The findings that fail this run: the errors, and the warnings in strict mode."""
        return self.errors + (self.warnings if self.strict else [])

    @property
    def ok(self) -> bool:
        """True when nothing fails the run. mcpchaos's own exit status counts too,
        so that a reason to fail this code does not know of still fails."""
        return not self.failures and not self.stale_baseline and self.returncode == 0

    def describe(self) -> str:
        """What failed, for a person: each failing finding with its scenario,
        message, evidence and repro line, then where the reports are."""
        fails = self.failures
        target = self._data.get("target") or {}
        what = target.get("url") or " ".join(target.get("command") or []) or "the target"
        lines: List[str] = []
        if fails:
            lines.append(
                f"mcpchaos found {_count(len(fails), 'failing finding')} testing {what} "
                f"(seed {self.seed}; {_count(len(self.errors), 'error')}, "
                f"{_count(len(self.warnings), 'warning')}{', strict' if self.strict else ''}):"
            )
            for f in fails:
                lines.append("")
                lines.extend(format_finding(f))
        for s in self.stale_baseline:
            lines.append("")
            lines.append(f"stale baseline entry (it no longer fails; remove it): {json.dumps(s, sort_keys=True)}")
        if not fails and not self.stale_baseline and self.returncode != 0:
            lines.append(f"mcpchaos exited {self.returncode} testing {what}:")
            lines.append(self.output.rstrip())
        totals = [ln for ln in self.output.splitlines() if re.match(r"^\d+ scenarios?: ", ln)]
        lines.append("")
        lines.extend(totals[-1:])
        if self.cwd is not None:
            lines.append(f"repro commands run in: {self.cwd}")
        lines.append(f"report: {self.path}")
        if self.html_path is not None:
            lines.append(f"html:   {self.html_path}")
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# Control characters, and bidirectional-text controls that could reorder a
# terminal line, are spelled out: the server's bytes should not drive the terminal.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def _safe(text: str) -> str:
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


def _excerpt(text: str, head: int = 4, tail: int = 8) -> List[str]:
    lines = text.splitlines() or [""]
    if len(lines) > head + tail + 1:
        lines = lines[:head] + [f"… ({len(lines) - head - tail} lines left out)"] + lines[-tail:]
    return ["    | " + _safe(line) for line in lines]


def format_finding(f: Finding) -> List[str]:
    """A finding as lines of text: kind, severity, scenario, rule, message, request,
    evidence (long excerpts shortened, the stderr tail kept) and repro."""
    head = f"{f.get('kind')} {f.get('severity')}"
    if f.get("signature"):
        head += f" {f['signature']}"
    head += f" [{f.get('scenario')}]"
    if f.get("rule"):
        head += f" rule {f['rule']}"
    out = [head, "  " + _safe(str(f.get("message", "")))]
    req = f.get("request")
    if req:
        name = " ".join(str(req[k]) for k in ("method", "tool") if req.get(k))
        out.append(f"  request: {name} (id {json.dumps(req.get('id'))})")
    for e in f.get("evidence") or []:
        at = f" at {e['t_us'] / 1e6:.3g}s" if isinstance(e.get("t_us"), (int, float)) else ""
        where = " ".join(str(e[k]) for k in ("type", "dir") if e.get(k))
        out.append(f"  evidence: seq {e.get('seq')}, {where}{at}")
        if e.get("excerpt"):
            out.extend(_excerpt(str(e["excerpt"])))
    if f.get("repro"):
        out.append(f"  repro: {f['repro']}")
    return out


def _as_list(value: Union[None, str, Sequence[str]]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def build_argv(
    binary: str,
    *,
    command: Optional[Sequence[str]] = None,
    url: Optional[str] = None,
    scenario: Union[None, str, Sequence[str]] = None,
    seed: Optional[int] = None,
    deadline: Union[None, str, float] = None,
    strict: bool = False,
    args: Sequence[str] = (),
    report: Path,
    html: Optional[Path] = None,
    transcript_dir: Optional[Path] = None,
) -> List[str]:
    """The ``mcpchaos test`` command line for these settings."""
    if isinstance(command, str):
        raise TypeError(f"command must be a list of arguments, not the string {command!r} (split it yourself)")
    argv = [binary, "test", "--report", str(report)]
    if html is not None:
        argv += ["--report-format", f"html={html}"]
    if transcript_dir is not None:
        argv += ["--transcript-dir", str(transcript_dir)]
    if url:
        argv += ["--url", url]
    for s in _as_list(scenario):
        argv += ["--scenario", s]
    if seed is not None:
        argv += ["--seed", str(int(seed))]
    if deadline is not None:
        argv += ["--deadline", f"{deadline}s" if isinstance(deadline, (int, float)) else str(deadline)]
    if strict:
        argv.append("--strict")
    argv += [str(a) for a in args]
    if command:
        argv += ["--", *[os.fspath(c) for c in command]]
    return argv


def run_test(
    command: Optional[Sequence[str]] = None,
    *,
    url: Optional[str] = None,
    scenario: Union[None, str, Sequence[str]] = None,
    seed: Optional[int] = None,
    deadline: Union[None, str, float] = None,
    strict: bool = False,
    args: Sequence[str] = (),
    report: Optional[PathLike] = None,
    html: Union[None, bool, PathLike] = True,
    transcripts: bool = True,
    binary: Optional[str] = None,
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = None,
) -> Report:
    """Run ``mcpchaos test`` against a stdio server ``command`` (argv list) or the
    HTTP server at ``url`` (started with ``command`` when both are given), and
    return its report.

    ``scenario`` (a name or a list), ``seed``, ``deadline`` (seconds or a Go
    duration such as ``"2s"``), ``strict`` and ``args`` (more CLI flags) map to the
    CLI's flags. ``report`` is the JSON file to write (default: ``mcpchaos-report.json``
    in ``cwd``); ``html`` True writes the HTML page next to it, with transcripts
    for its timelines. ``binary`` defaults to :func:`mcpchaos.find_mcpchaos_bin`'s.

    Raises :class:`McpChaosError` when mcpchaos could not test the target (exit
    status 2, or no report), with what mcpchaos said; FileNotFoundError when there
    is no binary. Findings never raise: read ``report.ok`` / ``report.describe()``.
    ``timeout`` is the most seconds the run may take (default 15 minutes); past
    it mcpchaos is stopped and McpChaosError raised.
    """
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    exe = resolve_binary(binary)
    workdir = Path(cwd) if cwd is not None else Path.cwd()
    report_path = Path(report) if report is not None else workdir / "mcpchaos-report.json"
    report_path = report_path if report_path.is_absolute() else workdir / report_path
    report_path.parent.mkdir(parents=True, exist_ok=True)
    html_path: Optional[Path] = None
    if html is True:
        html_path = report_path.with_suffix(".html")
    elif html:
        html_path = Path(html)
    transcript_dir = report_path.with_suffix(".transcripts") if html_path is not None and transcripts else None
    for stale in (report_path, html_path):
        if stale is not None and stale.exists():
            stale.unlink()  # a report left by an earlier run must not pass for this one's
    argv = build_argv(
        exe,
        command=command,
        url=url,
        scenario=scenario,
        seed=seed,
        deadline=deadline,
        strict=strict,
        args=args,
        report=report_path,
        html=html_path,
        transcript_dir=transcript_dir,
    )
    run_env = None if env is None else {**os.environ, **env}
    try:
        proc = subprocess.Popen(
            argv,
            cwd=str(workdir),
            env=run_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as e:
        raise McpChaosError(f"cannot run {exe}: {e}") from e
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise McpChaosError(f"mcpchaos did not finish in {timeout}s: {_shell(argv)}") from None
    except BaseException:  # KeyboardInterrupt: do not leave mcpchaos and its server behind
        _stop(proc)
        raise
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    if proc.returncode not in (0, 1) or not report_path.exists():
        said = _last_lines(stderr) or _last_lines(stdout) or "(nothing)"
        raise McpChaosError(
            f"mcpchaos could not test {url or ' '.join(_as_list(command)) or 'its bundled server'} "
            f"(exit status {proc.returncode}):\n{said}\n(ran {_shell(argv)} in {workdir})"
        )
    return Report.load(
        report_path,
        html_path=html_path if html_path is not None and html_path.exists() else None,
        returncode=proc.returncode,
        output=stdout,
        argv=argv,
        cwd=workdir,
        strict=strict,
    )


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    """Ask mcpchaos to stop (SIGTERM, so that it stops the server it started),
    and kill it if it has not within 10 seconds."""
    proc.terminate()
    try:
        proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def _last_lines(text: str, n: int = 15) -> str:
    """mcpchaos's own error lines, without its per-scenario progress lines."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not re.match(r"^mcpchaos: \[\d+/\d+\] ", ln)]
    return "\n".join(_safe(ln) for ln in lines[-n:])


def _shell(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)
