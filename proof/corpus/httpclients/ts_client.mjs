// A client on the TypeScript SDK (@modelcontextprotocol/sdk) as its README
// shows one: new Client, StreamableHTTPClientTransport, top-level await, no
// try/catch. It connects to $MCPCHAOS_SERVER_URL, lists the tools, calls
// the tool named by its first argument with the JSON arguments of its
// second, prints the result and closes. A call that fails rejects the
// top-level await: Node prints the SDK's error and exits 1.
//
// proof/httpclient_corpus_test.go copies it beside each pinned SDK release
// in .corpus (scripts/install-corpus), so that the import resolves to it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [name, args] = process.argv.slice(2);
const client = new Client({ name: "example-client", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCPCHAOS_SERVER_URL));
await client.connect(transport);

const tools = await client.listTools();
console.log("tools:", tools.tools.map((t) => t.name).join(" "));

const result = await client.callTool({ name, arguments: JSON.parse(args) });
console.log("result:", JSON.stringify(result.content));

await client.close();
