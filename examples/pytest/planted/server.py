"""A notes server on FastMCP, with a planted bug: a debugging print() in a tool.

Over stdio, stdout IS the JSON-RPC stream, so the print puts a line that is not
JSON between the server's messages. Clients differ in what they do with it (some
skip it, some drop the session); mcpchaos reports it as an error, rule
not-an-mcp-message. ../fixed/server.py is the same server with the print sent
to stderr, where logs belong.
"""

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("notes")
notes: dict[str, str] = {}


@mcp.tool()
def add_note(title: str, text: str) -> str:
    """Store a note under a title."""
    print(f"debug: add_note {title!r}")  # the bug: stdout is the protocol stream
    notes[title] = text
    return f"stored {title!r} ({len(notes)} notes)"


@mcp.tool()
def search_notes(query: str) -> list[str]:
    """The titles of the notes whose text contains the query."""
    return [title for title, text in notes.items() if query.lower() in text.lower()]


if __name__ == "__main__":
    mcp.run()
