"""A tiny stdio MCP server in plain Python (no SDK), with a bug to plant on demand.

The plugin's tests need a server they can break in a known way without
depending on the mcp package or Go:

  --stdout-log   prints a debug line on stdout in every tools/call: a non-JSON
                 line in the JSON-RPC stream (error, rule not-an-mcp-message,
                 found by the no-fault baseline)
  --exit-at-eof  exits as soon as stdin closes, its calls still running: their
                 answers are lost (warning lost-response under eof-inflight)
"""

import json
import sys
import threading
import time
from typing import Any, Dict, Optional

STDOUT_LOG = "--stdout-log" in sys.argv
EXIT_AT_EOF = "--exit-at-eof" in sys.argv
_out = threading.Lock()
TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def send(msg: Dict[str, Any]) -> None:
    with _out:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def answer(req_id: Any, result: Optional[Dict[str, Any]] = None, error: Optional[Dict[str, Any]] = None) -> None:
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": req_id}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    send(msg)


def call_tool(req_id: Any, params: Dict[str, Any]) -> None:
    args = params.get("arguments") or {}
    if params.get("name") != "echo":
        answer(req_id, error={"code": -32602, "message": f"unknown tool {params.get('name')!r}"})
        return
    if not isinstance(args.get("text"), str):
        answer(req_id, error={"code": -32602, "message": "text must be a string"})
        return
    if STDOUT_LOG:
        with _out:
            print(f"debug: echo {args['text']!r}", flush=True)  # the planted bug
    time.sleep(0.2)
    answer(req_id, {"content": [{"type": "text", "text": args["text"]}], "isError": False})


def main() -> None:
    workers = []
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            answer(None, error={"code": -32700, "message": "parse error"})
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # notifications and stray answers
        method, req_id, params = msg.get("method"), msg["id"], msg.get("params") or {}
        if method == "initialize":
            answer(
                req_id,
                {
                    "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "tiny", "version": "1.0.0"},
                },
            )
        elif method == "ping":
            answer(req_id, {})
        elif method == "tools/list":
            answer(req_id, {"tools": [TOOL]})
        elif method == "tools/call":
            t = threading.Thread(target=call_tool, args=(req_id, params), daemon=True)
            t.start()
            workers.append(t)
        else:
            answer(req_id, error={"code": -32601, "message": f"method not found: {method}"})
    if not EXIT_AT_EOF:
        for t in workers:
            t.join()


if __name__ == "__main__":
    main()
