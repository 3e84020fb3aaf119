"""What every example client here shares with mcpchaos test-client: the server command it
must launch, its tool arguments, and a backstop that ends a hung run.

The clients import it from their own directory (Python puts a script's directory first on
sys.path), so each stays runnable as `python CLIENT.py`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Callable


def server_argv(name: str) -> list[str]:
    """The server command of MCPCHAOS_SERVER_COMMAND; exits 2 when it is missing or malformed."""
    raw = os.environ.get("MCPCHAOS_SERVER_COMMAND")
    problem = None
    argv = None
    if not raw:
        problem = "MCPCHAOS_SERVER_COMMAND is not set (a JSON array of argv)"
    else:
        try:
            argv = json.loads(raw)
        except json.JSONDecodeError as exc:
            problem = f"MCPCHAOS_SERVER_COMMAND is not JSON: {exc}"
        else:
            if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
                problem = "MCPCHAOS_SERVER_COMMAND must be a non-empty JSON array of strings"
    if problem:
        print(f"{name}: {problem}", file=sys.stderr)
        raise SystemExit(2)
    return argv


def tool_arguments(name: str, tool: str, raw: str | None) -> dict:
    """The --args JSON, or {"text": ...} for echo and {} for other tools; exits 2 on bad JSON."""
    if raw is None:
        return {"text": f"hello from {name}"} if tool == "echo" else {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        print(f"{name}: --args is not JSON: {exc}", file=sys.stderr)
        raise SystemExit(2)


def start_backstop(timeout: float, log: Callable[[str], None]) -> None:
    """If even cancelling the session cannot unwind (a teardown stuck on a pipe), leave anyway,
    10s after the safety timeout."""

    def _backstop() -> None:
        time.sleep(timeout + 10)
        log(f"HANG: still running {timeout + 10:.0f}s after start; exiting hard")
        os._exit(3)

    threading.Thread(target=_backstop, daemon=True).start()
