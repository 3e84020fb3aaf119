"""A server on FastMCP 4 (PyPI `fastmcp`, the third-party framework), as its
README writes one: two tools (one reports progress), a resource and a
prompt. Run over stdio, or over streamable HTTP with `http PORT`."""

import asyncio
import sys

from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp-corpus")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool
async def slow(steps: int, ctx: Context) -> str:
    """Report progress for a few steps, 50 ms apart."""
    steps = max(0, min(steps, 5))
    for i in range(steps):
        await ctx.report_progress(i + 1, steps)
        await asyncio.sleep(0.05)
    return f"done {steps}"


@mcp.resource("data://greeting")
def greeting() -> str:
    return "hello"


@mcp.prompt
def ask(topic: str) -> str:
    return f"Tell me about {topic}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        mcp.run(show_banner=False)
