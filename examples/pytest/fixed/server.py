"""A notes server on FastMCP: the fixed twin of ../planted/server.py.

The debugging print goes to stderr: over stdio, stdout is the JSON-RPC stream
and must carry nothing else, while stderr is the server's log (MCP clients show
it or keep it).
"""

import sys

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("notes")
notes: dict[str, str] = {}


@mcp.tool()
def add_note(title: str, text: str) -> str:
    """Store a note under a title."""
    print(f"debug: add_note {title!r}", file=sys.stderr)  # the fix: logs go to stderr
    notes[title] = text
    return f"stored {title!r} ({len(notes)} notes)"


@mcp.tool()
def search_notes(query: str) -> list[str]:
    """The titles of the notes whose text contains the query."""
    return [title for title, text in notes.items() if query.lower() in text.lower()]


if __name__ == "__main__":
    mcp.run()
