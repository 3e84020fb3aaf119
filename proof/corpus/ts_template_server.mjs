// A stdio MCP server on the TypeScript SDK (@modelcontextprotocol/sdk),
// written as the SDK's README shows one ("Resources": a dynamic resource
// with a ResourceTemplate; "stdio": StdioServerTransport), whose template
// takes a list of ids as RFC 6570 lets it, an exploded path variable:
// users://list{/ids*} reads users://list/alice,bob.
//
//   node ts_template_server.mjs
//
// Before 1.25.2 the SDK's UriTemplate matched an exploded variable with
// ([^/]+(?:,[^/]+)*), whose first item may swallow the commas: a URI with a
// list of ids and a "/" the template has no room for is refused only after
// every split of the list (CVE-2026-0621, typescript-sdk #965), twice the
// time for each id more, on the event loop every request waits on. 1.25.2
// made the items comma-free. The server itself is the same on every release.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "users", version: "1.0.0" });

server.resource(
  "users",
  new ResourceTemplate("users://list{/ids*}", { list: undefined }),
  async (uri, { ids }) => ({
    contents: [{ uri: uri.href, text: `users ${[].concat(ids ?? []).join(", ")}` }],
  }),
);

server.tool("echo", { message: z.string() }, async ({ message }) => ({
  content: [{ type: "text", text: message }],
}));

await server.connect(new StdioServerTransport());
