#!/usr/bin/env python3
"""An MCP server on the official Python SDK's FastMCP, over HTTP.

What it does
    Serves two tools, as the other example servers do: `echo` answers its text, and `slow`
    answers after `ms` milliseconds, reporting `steps` progress notifications on the way. It
    speaks streamable HTTP (endpoint /mcp) or, with --transport sse, the legacy HTTP+SSE
    transport (GET /sse, POST /messages/). It has no bug planted: it is FastMCP as its README
    shows it, for `mcpchaos test --url` and as the server of `test-client --server-url`.
    Its annotations are real types, not strings (no `from __future__ import annotations`):
    an older FastMCP (mcp 1.6.0's) finds the Context parameter by its type, and takes a
    string annotation for a tool argument the client must give. On mcp 2.x, where FastMCP
    is MCPServer and run() takes the address, it serves the same tools the same way.

Usage
    python fastmcp_http.py --port 3000 [--transport streamable-http|sse]
"""

import argparse

import anyio

try:
    from mcp.server.fastmcp import Context, FastMCP

    MCP2 = False
except ModuleNotFoundError:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as FastMCP

    MCP2 = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--transport", choices=["streamable-http", "sse"], default="streamable-http")
    args = parser.parse_args()
    mcp = FastMCP("fastmcp-http") if MCP2 else FastMCP("fastmcp-http", host="127.0.0.1", port=args.port)

    @mcp.tool()
    async def echo(text: str = "") -> str:
        """Answers its text."""
        return text

    @mcp.tool()
    async def slow(ctx: Context, ms: int = 300, steps: int = 0) -> str:
        """Answers after ms milliseconds, reporting steps progress notifications."""
        for i in range(steps):
            await anyio.sleep(ms / 1000 / max(steps, 1))
            await ctx.report_progress(i + 1, steps)
        if steps == 0:
            await anyio.sleep(ms / 1000)
        return "done"

    if MCP2:
        mcp.run(transport=args.transport, host="127.0.0.1", port=args.port)
    else:
        mcp.run(transport=args.transport)


if __name__ == "__main__":
    main()
