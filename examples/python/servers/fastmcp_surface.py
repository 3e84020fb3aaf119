"""FastMCP as the Python SDK's README shows it: a tool, a resource, a resource
template and a prompt, over stdio. `go test ./proof -run TestFastMCPSurface`
keeps what mcpchaos's probe sends it: every request its capabilities make
callable (issue 29). Its reads take a moment, as a read that fetches
something does: the eof-surface scenario then always closes the
transport while one runs, rather than when the machine's load says."""

import asyncio

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("Demo")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers"""
    return a + b


@mcp.resource("config://app")
async def get_config() -> str:
    """Static configuration data"""
    await asyncio.sleep(0.5)
    return "App configuration here"


@mcp.resource("greeting://{name}")
async def get_greeting(name: str) -> str:
    """Get a personalized greeting"""
    await asyncio.sleep(0.5)
    return f"Hello, {name}!"


@mcp.prompt()
def review_code(code: str) -> str:
    return f"Please review this code:\n\n{code}"


if __name__ == "__main__":
    mcp.run()
