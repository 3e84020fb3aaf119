#!/usr/bin/env python3
"""A FastMCP server that wants a bearer token, as the Python SDK's README shows one
("Authentication": a TokenVerifier and AuthSettings, the server a resource server).

    python fastmcp_auth.py PORT [MODE]

serves http://127.0.0.1:PORT/mcp. The token that opens it is "s3cret-token-1234".
MODE is `checked` (the README's shape: the verifier compares the token), `any`
(a planted bug: the verifier takes any token, as a stub left in place does) or
`echo` (checked, and a planted bug: a `whoami` tool answers with the caller's
token, which the model the answer goes to then holds).
"""

import sys

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import FastMCP

TOKEN = "s3cret-token-1234"


class Verifier(TokenVerifier):
    def __init__(self, any_token: bool) -> None:
        self.any_token = any_token

    async def verify_token(self, token: str) -> AccessToken | None:
        if self.any_token or token == TOKEN:
            return AccessToken(token=token, client_id="client", scopes=["user"])
        return None


def main() -> None:
    port = int(sys.argv[1])
    mode = sys.argv[2] if len(sys.argv) > 2 else "checked"
    mcp = FastMCP(
        "fastmcp-auth",
        host="127.0.0.1",
        port=port,
        token_verifier=Verifier(mode == "any"),
        auth=AuthSettings(
            issuer_url="https://auth.example.com",
            resource_server_url=f"http://127.0.0.1:{port}",
            required_scopes=["user"],
        ),
    )

    @mcp.tool()
    def echo(text: str) -> str:
        """Answers its text."""
        return text

    if mode == "echo":

        @mcp.tool()
        def whoami() -> str:
            """Says who the caller is."""
            token = get_access_token()
            return f"client {token.client_id}, token {token.token}" if token else "anonymous"

    mcp.run(transport="streamable-http")


if __name__ == "__main__":
    main()
