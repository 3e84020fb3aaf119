"""``python -m mcpchaos ARGS...`` runs the mcpchaos binary installed with this package.

The binary is the real program; this exists for environments where only the
interpreter is on $PATH (``python -m`` from a tool, a venv not activated).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, NoReturn

from ._binary import McpChaosError, resolve_binary


def main(argv: List[str]) -> NoReturn:
    """Replace this process by the binary (POSIX), so that signals, the exit status
    and the terminal go straight to it; Windows has no exec, so run it as a child
    and pass its status on."""
    try:
        binary = resolve_binary()
    except (FileNotFoundError, McpChaosError) as e:
        print(f"mcpchaos: {e}", file=sys.stderr)
        sys.exit(2)
    if sys.platform == "win32":
        try:
            sys.exit(subprocess.call([binary, *argv]))
        except KeyboardInterrupt:
            sys.exit(130)
    os.execvp(binary, [binary, *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
