// Two MCP client sessions against ONE streamable-HTTP server, by hand (raw
// fetch, no SDK, so the JSON-RPC ids are ours): whether what one session's
// call produces reaches the other session.
//
//   node two_sessions.mjs URL [--staggered] [--json]
//
// Session A, then session B: initialize (id 1) and notifications/initialized.
// Then, at once in both, tools/call echo with id 2, params._meta.progressToken
// "tok-A" / "tok-B" and message "from-A" / "from-B". With --staggered, A's
// tools/call is sent first and B initializes while it runs, then B's
// tools/call: the order in which capturing the transport at request time
// (typescript-sdk PR #820, 1.17.1) keeps A's final response on A. Both orders
// need B's call to reach the server while A's runs: the echo tool of
// ts_server.mjs waits ~100 ms, which a loaded machine can miss; run the
// server with ECHO_DELAY_MS=1000 for a wider window. Each POST's response (application/json or
// text/event-stream) is read for at most 3 s. Prints per session the HTTP
// status and session id of its initialize (and the body when it is not a
// 200), and what its tools/call stream carried: responses (id and text),
// progress notifications (token), log messages (data), or "nothing before
// the timeout". With --json, prints one JSON object instead.
//
// Needs Node 18 or newer (global fetch). Exits 0 whatever the server does;
// 2 on a usage error.
const args = process.argv.slice(2);
const url = args.find((a) => !a.startsWith("--"));
const json = args.includes("--json");
const staggered = args.includes("--staggered");
if (!url || args.some((a) => a.startsWith("--") && a !== "--json" && a !== "--staggered")) {
  console.error("usage: node two_sessions.mjs URL [--staggered] [--json]");
  process.exit(2);
}
const TIMEOUT_MS = 3000;
const PROTOCOL = "2025-06-18";

// post sends one JSON-RPC message and reads its response for at most
// TIMEOUT_MS: {status, sessionId, contentType, messages, body, timedOut, error}.
async function post(sessionId, message) {
  const headers = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
  };
  if (sessionId) {
    headers["Mcp-Session-Id"] = sessionId;
    headers["MCP-Protocol-Version"] = PROTOCOL;
  }
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), TIMEOUT_MS);
  const out = { status: 0, sessionId: undefined, contentType: "", messages: [], body: "", timedOut: false };
  try {
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(message), signal: ac.signal });
    out.status = res.status;
    out.sessionId = res.headers.get("mcp-session-id") ?? undefined;
    out.contentType = res.headers.get("content-type") ?? "";
    if (!res.body) return out;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const chunk = decoder.decode(value, { stream: true });
      out.body += chunk;
      if (!out.contentType.includes("text/event-stream")) continue;
      buf += chunk.replace(/\r\n/g, "\n");
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = event
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data) out.messages.push(parse(data));
      }
    }
    if (out.contentType.includes("application/json") && out.body.trim()) {
      const m = parse(out.body);
      out.messages.push(...(Array.isArray(m) ? m : [m]));
    }
  } catch (err) {
    if (ac.signal.aborted) out.timedOut = true;
    else out.error = String(err?.cause ?? err);
  } finally {
    clearTimeout(timer);
  }
  return out;
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
}

// describe turns one received message into a short line.
function describe(m) {
  if (m.unparsed !== undefined) return `unparsed: ${m.unparsed.slice(0, 200)}`;
  if (m.method === "notifications/progress") {
    return `progress token=${JSON.stringify(m.params?.progressToken)} message=${JSON.stringify(m.params?.message)}`;
  }
  if (m.method === "notifications/message") {
    return `log level=${m.params?.level} data=${JSON.stringify(m.params?.data)}`;
  }
  if (m.method) return `${m.id !== undefined ? `request id=${JSON.stringify(m.id)} ` : "notification "}${m.method}`;
  if (m.error) return `error id=${JSON.stringify(m.id)} code=${m.error.code} message=${JSON.stringify(m.error.message)}`;
  if (m.result) {
    const texts = (m.result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
    if (texts.length) return `response id=${JSON.stringify(m.id)} text=${JSON.stringify(texts.join(" "))}${m.result.isError ? " isError" : ""}`;
    if (m.result.serverInfo) return `response id=${JSON.stringify(m.id)} initialize ${m.result.serverInfo.name} protocol ${m.result.protocolVersion}`;
    return `response id=${JSON.stringify(m.id)} ${JSON.stringify(m.result).slice(0, 200)}`;
  }
  return JSON.stringify(m).slice(0, 200);
}

const sessions = [
  { name: "A", token: "tok-A", message: "from-A" },
  { name: "B", token: "tok-B", message: "from-B" },
];

async function open(s) {
  s.initialize = await post(undefined, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: `two-sessions-${s.name}`, version: "1.0.0" } },
  });
  s.sessionId = s.initialize.sessionId;
  s.initialized = await post(s.sessionId, { jsonrpc: "2.0", method: "notifications/initialized" });
}

function call(s) {
  return post(s.sessionId, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "echo", arguments: { message: s.message }, _meta: { progressToken: s.token } },
  }).then((r) => (s.call = r));
}

const [A, B] = sessions;
if (staggered) {
  await open(A);
  const callA = call(A);
  // Let A's call reach the server before B's initialize does.
  await new Promise((resolve) => setTimeout(resolve, 10));
  await open(B);
  await Promise.all([callA, call(B)]);
} else {
  await open(A);
  await open(B);
  await Promise.all([call(A), call(B)]);
}

const summary = (r) => ({
  status: r.status,
  ...(r.sessionId ? { sessionId: r.sessionId } : {}),
  received: r.messages.map(describe),
  ...(r.timedOut ? { timedOut: true } : {}),
  ...(r.error ? { error: r.error } : {}),
  ...(r.status !== 200 && r.status !== 202 && r.body ? { body: r.body.slice(0, 300) } : {}),
});

if (json) {
  console.log(
    JSON.stringify(
      Object.fromEntries(
        sessions.map((s) => [s.name, { initialize: summary(s.initialize), initialized: summary(s.initialized), call: summary(s.call) }]),
      ),
      null,
      2,
    ),
  );
} else {
  for (const s of sessions) {
    const init = s.initialize;
    console.log(`session ${s.name}:`);
    console.log(
      `  initialize: HTTP ${init.status}${init.sessionId ? ` session ${init.sessionId}` : " no session id"}` +
        (init.timedOut ? " (timed out)" : "") +
        (init.error ? ` (${init.error})` : ""),
    );
    if (init.status !== 200) console.log(`    body: ${JSON.stringify(init.body.slice(0, 300))}`);
    else for (const m of init.messages) console.log(`    ${describe(m)}`);
    console.log(`  notifications/initialized: HTTP ${s.initialized.status}${s.initialized.status !== 202 && s.initialized.body ? ` body ${JSON.stringify(s.initialized.body.slice(0, 200))}` : ""}`);
    const call = s.call;
    const callStatus = call.status ? `HTTP ${call.status}${call.contentType ? ` ${call.contentType.split(";")[0]}` : ""}` : "no response headers";
    console.log(`  tools/call echo id 2 (${s.token}, ${s.message}): ${callStatus}${call.error ? ` (${call.error})` : ""}`);
    if (call.status && call.status !== 200 && call.body) console.log(`    body: ${JSON.stringify(call.body.slice(0, 300))}`);
    else for (const m of call.messages) console.log(`    ${describe(m)}`);
    if (call.timedOut) console.log(`    ${call.messages.length ? "then nothing more" : "nothing"} before the timeout (${TIMEOUT_MS / 1000} s)`);
  }
}
