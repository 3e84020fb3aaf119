"""A client on the Python SDK's 2.x releases (`mcp`) as its README shows one:
`Client(url)`, no try/except. It connects to $MCPCHAOS_SERVER_URL, lists the
tools, calls the tool named by its first argument with the JSON arguments of
its second, prints the result and closes. A call that fails raises: Python
prints the traceback and exits 1. (proof/httpclient_corpus_test.go)"""

import asyncio
import json
import os
import sys

from mcp import Client


async def main() -> None:
    name, args = sys.argv[1], json.loads(sys.argv[2])
    async with Client(os.environ["MCPCHAOS_SERVER_URL"]) as client:
        tools = await client.list_tools()
        print("tools:", " ".join(t.name for t in tools.tools), flush=True)
        result = await client.call_tool(name, args)
        print("result:", result.content, flush=True)


asyncio.run(main())
