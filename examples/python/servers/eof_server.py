"""A FastMCP stdio server whose handlers are still running when stdin closes.

It reproduces python-sdk issue #526, fixed by PR #2306 in mcp 1.27.0. In mcp
1.26.0, when the transport closes (stdin EOF) with handlers in flight:

1. Server.run()'s task group waits for the running handlers instead of
   cancelling them. When a handler finishes it answers into the write stream
   that BaseSession._receive_loop already closed on its way out, and the server
   dies of anyio.ClosedResourceError inside nested ExceptionGroups (tool `slow`).
2. Handlers blocked on a server-to-client request (here roots/list, tool
   `roots`) are woken by _receive_loop's finally, which sends each a
   CONNECTION_CLOSED error while iterating self._response_streams.items(); the
   woken handler's send_request finally pops its entry from that dict, so with
   two or more handlers blocked the loop dies of
   `RuntimeError: dictionary changed size during iteration`. The woken handler
   then answers into the closed write stream too (ClosedResourceError).

mcp 1.27.0 cancels the in-flight handlers when the incoming stream ends,
snapshots the dict before iterating it, and drops a response whose stream is
closed: the same session ends with exit status 0.

The tools are listed `roots` first, so a client that calls every tool and
repeats the list to have three calls in flight (mcpchaos test does) has two
`roots` handlers blocked on roots/list at once, which race 2 needs; `roots`
waits for its twin (see _pair_up) so that this does not depend on timing.

Run it with the python of one of the environments that scripts/install-sdks
makes, e.g. .sdk/py-mcp-1.26.0/bin/python examples/python/servers/eof_server.py.
"""

import anyio

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("eof-server")


# Race 2 needs two handlers blocked on roots/list at the moment stdin closes.
# A client's calls reach the server a few microseconds apart, but on a loaded
# machine the second handler can start after the first roots/list has gone
# out, and an early EOF timed on that request then finds one handler, not two.
# So a roots call waits (at most PAIR_WAIT seconds) until a second one is in
# flight, and the pair asks together: both are registered as pending requests
# before the first roots/list can reach the client.
PAIR_WAIT = 2.0
_pair: list | None = None  # [calls arrived, anyio.Event set when two have]


async def _pair_up() -> None:
    global _pair
    if _pair is None or _pair[1].is_set():
        _pair = [0, anyio.Event()]
    pair = _pair
    pair[0] += 1
    if pair[0] >= 2:
        pair[1].set()
        return
    with anyio.move_on_after(PAIR_WAIT):
        await pair[1].wait()


@server.tool()
async def roots(ctx: Context) -> str:
    """Ask the client for its roots (a server-to-client roots/list request) and return how many it has."""
    await _pair_up()
    result = await ctx.session.list_roots()
    return f"{len(result.roots)} roots"


@server.tool()
async def slow(ctx: Context, seconds: float = 1.0, progress: bool = False) -> str:
    """Sleep for `seconds` (default 1); with progress=true, report progress four times along the way."""
    # Silent by default (the probe of mcpchaos test sets required arguments
    # only): the handler then writes nothing until its answer, so on 1.26.0 it
    # is exactly issue #526, a handler that outlives stdin and answers into the
    # closed write stream. A progress notification sent after stdin closed
    # fails inside the tool first, and FastMCP turns that into an error result
    # which then hits the same closed stream: the same crash, reached sooner.
    steps = 4 if progress else 1
    for step in range(steps):
        if progress:
            await ctx.report_progress(step, steps, f"step {step + 1} of {steps}")
        await anyio.sleep(seconds / steps)
    return f"slept {seconds}s"


if __name__ == "__main__":
    server.run("stdio")
