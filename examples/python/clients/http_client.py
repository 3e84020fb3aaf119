#!/usr/bin/env python3
"""MCP client on the official Python SDK (`mcp`) over streamable HTTP.

What it does
    Connects to the MCP endpoint in MCPCHAOS_SERVER_URL (as `mcpchaos test-client --server-url`
    provides it) with `mcp.client.streamable_http.streamablehttp_client` (mcp 2.x's
    `streamable_http_client`; with --sse, the
    legacy HTTP+SSE transport's `mcp.client.sse.sse_client`, for a URL ending in /sse), opens a
    `ClientSession` as the SDK's README shows it, initializes, lists the tools, calls `echo`
    and then `slow` with a progress callback, prints each step, closes, and exits:
      0  both calls returned a result
      1  the session failed (an exception: a cut stream, an HTTP error, McpError, ...)
      2  usage error (no MCPCHAOS_SERVER_URL)
      3  the safety timeout (--timeout, default 300s) expired: the client hung
    It sets no request timeout of its own: mcpchaos judges hangs itself.

Usage
    MCPCHAOS_SERVER_URL=http://127.0.0.1:3171/mcp python http_client.py [--sse] [--timeout 300]
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.sse import sse_client

try:
    from mcp.client.streamable_http import streamablehttp_client
except ImportError:  # mcp 2.x renamed it, and yields the two streams alone
    from mcp.client.streamable_http import streamable_http_client as streamablehttp_client

from mcpchaos_env import start_backstop


async def session(url: str, sse: bool) -> None:
    if sse:
        async with sse_client(url) as (read, write):
            await converse(read, write)
        return
    async with streamablehttp_client(url) as streams:
        await converse(streams[0], streams[1])


async def converse(read, write) -> None:
    async with ClientSession(read, write) as s:
        init = await s.initialize()
        print(f"initialized: {field(init, 'serverInfo').name} protocol {field(init, 'protocolVersion')}", flush=True)
        tools = await s.list_tools()
        print("tools " + " ".join(t.name for t in tools.tools), flush=True)
        res = await s.call_tool("echo", {"text": "hello"})
        print(f"result echo isError={field(res, 'isError')}", flush=True)

        async def progress(p: float, total: float | None, message: str | None) -> None:
            print(f"progress {p}/{total}", flush=True)

        res = await s.call_tool("slow", {"ms": 300, "steps": 3}, progress_callback=progress)
        print(f"result slow isError={field(res, 'isError')}", flush=True)


def field(obj, camel: str):
    """obj's field by its 1.x name (serverInfo) or its 2.x one (server_info)."""
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return getattr(obj, camel) if hasattr(obj, camel) else getattr(obj, snake)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--sse", action="store_true", help="speak the legacy HTTP+SSE transport")
    args = parser.parse_args()
    url = os.environ.get("MCPCHAOS_SERVER_URL")
    if not url:
        print("http_client: MCPCHAOS_SERVER_URL is not set (the server's MCP endpoint)", file=sys.stderr)
        return 2
    start_backstop(args.timeout, lambda line: print(f"http_client: {line}", file=sys.stderr, flush=True))
    try:
        anyio.run(session, url, args.sse)
    except BaseException as exc:  # noqa: BLE001 - report any failure as exit 1
        if isinstance(exc, SystemExit):
            raise
        # One line, not a traceback: a failed call is an answer this client
        # handles, not a crash.
        print(f"http_client: the session failed: {exc!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
