"""A client on FastMCP 4's Client (PyPI `fastmcp`), as a script writes one:
it connects to the server mcpchaos test-client gives it (the command in
MCPCHAOS_SERVER_COMMAND over stdio, or MCPCHAOS_SERVER_URL over HTTP),
lists the tools, calls echo (or add) and exits. It catches nothing: when a
call fails, the SDK's error ends the script with a traceback and status 1,
which is how such a script reports a failure."""

import asyncio
import json
import os

from fastmcp import Client
from fastmcp.client.transports import StdioTransport


async def main() -> None:
    url = os.environ.get("MCPCHAOS_SERVER_URL")
    if url:
        target = url
    else:
        argv = json.loads(os.environ["MCPCHAOS_SERVER_COMMAND"])
        target = StdioTransport(command=argv[0], args=argv[1:])
    async with Client(target) as client:
        names = [t.name for t in await client.list_tools()]
        print("tools:", " ".join(names), flush=True)
        if "echo" in names:
            result = await client.call_tool("echo", {"text": "hi"})
        else:
            result = await client.call_tool("add", {"a": 1, "b": 2})
        print("result:", result.content[0].text if result.content else result, flush=True)


asyncio.run(main())
