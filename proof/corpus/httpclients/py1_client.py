"""A client on the Python SDK's 1.x releases (`mcp`) as its README showed
one: streamablehttp_client (or, with --sse, the legacy transport's
sse_client) and a ClientSession, no try/except. It connects to
$MCPCHAOS_SERVER_URL, initializes, lists the tools, calls the tool named by
its first argument with the JSON arguments of its second, prints the result
and closes. A call that fails raises: Python prints the traceback and exits
1. (proof/httpclient_corpus_test.go)"""

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamablehttp_client


async def run(session: ClientSession, name: str, args: dict) -> None:
    await session.initialize()
    tools = await session.list_tools()
    print("tools:", " ".join(t.name for t in tools.tools), flush=True)
    result = await session.call_tool(name, args)
    print("result:", result.content, flush=True)


async def main() -> None:
    url = os.environ["MCPCHAOS_SERVER_URL"]
    sse = "--sse" in sys.argv
    name, args = [a for a in sys.argv[1:] if a != "--sse"]
    if sse:
        async with sse_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await run(session, name, json.loads(args))
        return
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await run(session, name, json.loads(args))


asyncio.run(main())
