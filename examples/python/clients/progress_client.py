#!/usr/bin/env python3
"""MCP client on the official Python SDK (`mcp`) that calls one tool with a progress token.

What it does
    Launches the server given in MCPCHAOS_SERVER_COMMAND (a JSON array of argv, exactly as
    `mcpchaos test-client` provides it) over stdio with `mcp.client.stdio.stdio_client`, opens a
    `ClientSession` the way the SDK's README of the time shows it (no message handler, nobody
    reading `session.incoming_messages`), initializes, lists tools, calls one tool with
    `_meta.progressToken` set, prints each step and the result, closes, and exits:
      0  the call returned a result (even an `isError` one: the transport worked)
      1  the session failed (an exception: connection closed, McpError, ...)
      2  usage error (no MCPCHAOS_SERVER_COMMAND, unknown tool, bad --args)
      3  the safety timeout (--timeout, default 300s) expired: the client hung
    It has no timeout of its own below --timeout; mcpchaos judges hangs itself.

Which bug it pins (row 2 of issue 4)
    modelcontextprotocol/python-sdk issue #594, "call_tool hangs ... when server sends
    notifications before response". In mcp <= 1.5.0, `BaseSession._receive_loop` hands every
    incoming notification (and every server request the session does not answer itself) to
    `self._incoming_message_stream_writer.send(...)`, a memory object stream created with
    `anyio.create_memory_object_stream()`, i.e. max_buffer_size=0. A client that does not
    drain `session.incoming_messages` (the documented usage does not) blocks its receive
    loop forever on the first server notification other than notifications/cancelled:
    progress, notifications/message, */list_changed. The response to the pending request is
    never read, so `call_tool` never returns, and the client no longer reads anything (it
    answers no ping). The transport does not matter: it reproduces over stdio, not only with
    the in-memory streams of the original report.
    mcp 1.6.0 replaced that stream with `message_handler` (default: a checkpoint), so the
    same program completes.

Exposing it with mcpchaos
    The default tool, `echo`, sends no notification itself, so the session is clean on both
    versions without faults. Under
        --fault 'burst:on=s2c:response:tools/call,count=20'
    mcpchaos injects 20 notifications/progress for the call's token just before the call's
    response: mcp 1.5.0 hangs (receive loop stuck), mcp 1.6.0 prints the result and exits 0.
    `--tool slow --args '{"ms":200,"steps":3}'` against `mcpchaos serve` makes the server
    itself send progress before its result: that hangs 1.5.0 with no fault at all.

Usage
    MCPCHAOS_SERVER_COMMAND='["mcpchaos","serve"]' python progress_client.py \
        [--tool echo] [--args '{"text":"hi"}'] [--timeout 300]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from mcpchaos_env import server_argv, start_backstop, tool_arguments

try:
    from importlib.metadata import version as _pkg_version

    MCP_VERSION = _pkg_version("mcp")
except Exception:  # pragma: no cover - metadata missing
    MCP_VERSION = "unknown"

PROGRESS_TOKEN = "progress-client-1"
T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[progress_client {time.monotonic() - T0:7.3f}s] {msg}", flush=True)


async def run(argv: list[str], tool: str, arguments: dict) -> int:
    # env: the whole environment, so the command runs exactly as given (the SDK would
    # otherwise pass only HOME, PATH, ... to the server).
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    log(f"mcp {MCP_VERSION}: launching {argv}")
    async with stdio_client(params) as (read, write):
        # As in the SDK README: no message_handler (it does not exist before 1.6.0) and
        # nobody reading session.incoming_messages.
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            log(f"initialized: server {init.serverInfo.name} {init.serverInfo.version}, "
                f"protocol {init.protocolVersion}")
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            log(f"tools/list: {names}")
            if tool not in names:
                log(f"tool {tool!r} is not offered by the server; pass --tool")
                return 2
            log(f"tools/call {tool} {json.dumps(arguments)} with progressToken {PROGRESS_TOKEN!r} ...")
            result = await session.send_request(
                types.ClientRequest(
                    types.CallToolRequest(
                        method="tools/call",
                        params=types.CallToolRequestParams(
                            name=tool,
                            arguments=arguments,
                            _meta=types.RequestParams.Meta(progressToken=PROGRESS_TOKEN),
                        ),
                    )
                ),
                types.CallToolResult,
            )
            text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
            log(f"tools/call {tool} returned (isError={result.isError}): {text[:200]!r}")
    log("closed")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default="echo", help="tool to call (default: echo)")
    ap.add_argument("--args", default=None, help="tool arguments as a JSON object "
                    "(default: {\"text\": ...} for echo, {} otherwise)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="safety timeout in seconds for the whole session (default 300)")
    opts = ap.parse_args()
    arguments = tool_arguments("progress_client", opts.tool, opts.args)
    argv = server_argv("progress_client")

    start_backstop(opts.timeout, log)

    async def guarded() -> int:
        with anyio.move_on_after(opts.timeout) as scope:
            return await run(argv, opts.tool, arguments)
        if scope.cancel_called:
            log(f"HANG: no progress within the safety timeout of {opts.timeout:.0f}s")
        return 3

    try:
        return anyio.run(guarded)
    except Exception as exc:  # the session failed: report it, exit non-zero
        log(f"FAILED: {type(exc).__name__}: {exc}")
        traceback.print_exception(exc)  # on stderr, so crash signatures can be named
        return 1


if __name__ == "__main__":
    sys.exit(main())
