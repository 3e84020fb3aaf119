#!/usr/bin/env python3
"""Microsoft Agent Framework client: `MCPStdioTool` connects, calls one MCP tool, closes.

What it does
    Launches the server given in MCPCHAOS_SERVER_COMMAND (a JSON array of argv, exactly as
    `mcpchaos test-client` provides it) with `agent_framework.MCPStdioTool` (which uses
    `mcp.client.stdio.stdio_client` underneath), enters it as an async context manager
    (connect: initialize, tools/list, prompts/list), calls one tool through
    `MCPStdioTool.call_tool` exactly as an agent's function call would, prints each step and
    the result, closes, and exits:
      0  the call returned a result
      1  the call or the connection failed (ToolException, ToolExecutionException, ...),
         including the "timeout surfacing as a failed call" of --request-timeout
      2  usage error (no MCPCHAOS_SERVER_COMMAND, unknown tool, bad --args)
      3  the safety timeout (--timeout, default 300s) expired: the client hung
    No LLM, no network: the tool object is used directly. Its only timeouts are the safety
    timeout and, if given, --request-timeout (the SDK's per-request read timeout; default
    none, as in MCPStdioTool's default); mcpchaos judges hangs itself.

Which bug it pins (row 3 of issue 4)
    microsoft/agent-framework issue #4828, fixed by PR #4866 ("prevent MCP message_handler
    deadlock on notification reload"), released in agent-framework-core 1.4.0.
    In agent-framework-core <= 1.3.0, `MCPTool.message_handler` does
        case "notifications/tools/list_changed":   await self.load_tools()
        case "notifications/prompts/list_changed": await self.load_prompts()
    The MCP SDK calls message_handler inline from its single receive loop
    (`BaseSession._receive_loop` -> `_handle_incoming`), and load_tools() first sends a ping
    (`_ensure_connected`) and then tools/list and awaits their responses: responses only
    that same, now blocked, receive loop could read. Deadlock: the ping is never resolved,
    the pending tools/call never returns (or, with request_timeout set, times out and
    surfaces as a failed call), and the client answers nothing the server sends it any more.
    1.4.0 schedules the reload as a background asyncio task (`_schedule_reload`), so the
    same program completes and the reload runs after the handler returns.

Exposing it with mcpchaos
    The default tool, `echo`, sends no notification, so the session is clean on both versions
    without faults. Under
        --fault 'burst:on=s2c:response:tools/call,method=notifications/tools/list_changed,count=1'
    mcpchaos injects notifications/tools/list_changed just before the call's response:
    1.3.0 hangs (its ping goes out and is answered, but is never read), 1.4.0 exits 0.
    `--tool list_changed` against `mcpchaos serve` makes the server itself send
    tools/prompts/resources list_changed mid-call: that hangs 1.3.0 with no fault at all.

Teardown race (--linger)
    After the call it keeps the session open --linger seconds (default 0.5, as an agent would
    while its model reads the result) before closing. With --linger 0 on 1.4.0 the close
    races with the background reload the notification started: `_close_on_owner` cancels the
    reload whose ping is already on the wire, the SDK's receive loop is gone when the answer
    comes, and `mcp.client.stdio.stdio_client`'s stdout_reader dies of
    anyio.BrokenResourceError, raised out of `async with MCPStdioTool` as an ExceptionGroup
    (exit 1, judged `crash` python:BrokenResourceError; also seen with mcp 1.24.0 to 1.30.0).
    That is a second, separate bug; --linger 0.5 keeps row 3 about the deadlock alone.

Usage
    MCPCHAOS_SERVER_COMMAND='["mcpchaos","serve"]' python af_list_changed_client.py \
        [--tool echo] [--args '{"text":"hi"}'] [--request-timeout SECONDS] [--linger 0.5] \
        [--timeout 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import traceback

from agent_framework import MCPStdioTool

from mcpchaos_env import server_argv, start_backstop, tool_arguments

try:
    from importlib.metadata import version as _pkg_version

    VERSIONS = f"agent-framework-core {_pkg_version('agent-framework-core')}, mcp {_pkg_version('mcp')}"
except Exception:  # pragma: no cover - metadata missing
    VERSIONS = "versions unknown"

T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[af_list_changed_client {time.monotonic() - T0:7.3f}s] {msg}", flush=True)


def remote_names(tool: MCPStdioTool) -> list[str]:
    names = []
    for func in tool.functions:
        props = func.additional_properties or {}
        names.append(props.get("_mcp_remote_name", func.name))
    return names


async def run(argv: list[str], tool_name: str, arguments: dict, request_timeout: int | None,
              linger: float) -> int:
    log(f"{VERSIONS}: launching {argv}")
    mcp_tool = MCPStdioTool(
        name="mcpchaos",
        command=argv[0],
        args=argv[1:],
        # the whole environment, so the command runs exactly as given (the SDK would
        # otherwise pass only HOME, PATH, ... to the server)
        env=dict(os.environ),
        request_timeout=request_timeout,
    )
    async with mcp_tool:
        names = remote_names(mcp_tool)
        log(f"connected; tools/list: {names}")
        if tool_name not in names:
            log(f"tool {tool_name!r} is not offered by the server; pass --tool")
            return 2
        log(f"call_tool {tool_name} {json.dumps(arguments)} ...")
        try:
            result = await mcp_tool.call_tool(tool_name, **arguments)
        except Exception as exc:
            # Say so now: closing the tool below may raise something else on top of it.
            inner = getattr(exc, "inner_exception", None) or exc.__cause__
            log(f"call_tool {tool_name} FAILED: {type(exc).__name__}: {exc}"
                + (f" (caused by {type(inner).__name__}: {inner})" if inner else ""))
            raise
        if isinstance(result, str):
            text = result
        else:
            text = " ".join(getattr(c, "text", None) or str(c) for c in result)
        log(f"call_tool {tool_name} returned: {text[:200]!r}")
        if linger > 0:
            # An agent keeps the session open while its model reads the result; closing at
            # once races with a reload still in flight (see the README, "teardown race").
            await asyncio.sleep(linger)
        log(f"tools after the call: {remote_names(mcp_tool)}")
        log("closing")
    log("closed")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default="echo", help="tool to call (default: echo)")
    ap.add_argument("--args", default=None, help="tool arguments as a JSON object "
                    "(default: {\"text\": ...} for echo, {} otherwise)")
    ap.add_argument("--request-timeout", type=int, default=None,
                    help="MCPStdioTool request_timeout in seconds (default: none, the library default)")
    ap.add_argument("--linger", type=float, default=0.5,
                    help="seconds to keep the session open after the call before closing (default 0.5; "
                         "0 closes at once, which races with a list_changed reload on 1.4.0)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="safety timeout in seconds for the whole session (default 300)")
    opts = ap.parse_args()
    arguments = tool_arguments("af_list_changed_client", opts.tool, opts.args)
    argv = server_argv("af_list_changed_client")

    start_backstop(opts.timeout, log)

    async def guarded() -> int:
        try:
            return await asyncio.wait_for(run(argv, opts.tool, arguments, opts.request_timeout, opts.linger), opts.timeout)
        except asyncio.TimeoutError:
            log(f"HANG: no progress within the safety timeout of {opts.timeout:.0f}s")
            return 3

    try:
        return asyncio.run(guarded())
    except Exception as exc:  # the call or the connection failed: report it, exit non-zero
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        log(f"FAILED: {type(exc).__name__}: {exc}" + (f" (caused by {type(inner).__name__}: {inner})" if inner else ""))
        traceback.print_exception(exc)  # on stderr, so crash signatures can be named
        return 1


if __name__ == "__main__":
    sys.exit(main())
