"""A FastMCP proxy fronting another MCP server, as FastMCP's docs show one.

FastMCP.as_proxy(ProxyClient(backend)) serves the backend's tools over
streamable HTTP and forwards what the backend sends while a call runs (its
log messages, its progress) to the client that made the call. With several
clients at once, each must get its own call's log lines and no other's: the
scenarios of several sessions of mcpchaos test --url check that
(proof/sessions_test.go). The backend's echo logs its message before and
after a short wait, so that two clients' calls overlap.

Usage: python fastmcp_proxy.py PORT   (endpoint http://127.0.0.1:PORT/mcp)
"""

import asyncio
import sys

from fastmcp import Context, FastMCP
from fastmcp.server.proxy import ProxyClient

backend = FastMCP("backend")


@backend.tool
async def echo(message: str, ctx: Context) -> str:
    """Echo the message, logging it before and after."""
    await ctx.info(f"echo {message}")
    await asyncio.sleep(0.2)
    await ctx.info(f"echoed {message}")
    return message


proxy = FastMCP.as_proxy(ProxyClient(backend), name="proxy")

if __name__ == "__main__":
    proxy.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
