// Package mcpschema judges MCP messages by the official JSON schema of the
// session's protocol revision, vendored from the specification repository
// (schemas/SOURCES says from which commit, scripts/update-mcp-schemas
// refreshes them).
//
// A chaos run's findings are only as good as its idea of a well-formed
// message. Hand-written shape checks drift from the specification, cover the
// few fields someone thought of, and cannot tell which revision made a field
// required; the specification's own schema can. So every message is checked
// against the schema of the revision the session negotiated, and a message
// that breaks it is reported with the JSON pointer of the broken value.
//
// Nothing is known here about particular methods: which definition checks a
// request, a notification or a result is read from the schema itself (a
// definition's method constant, XRequest answered by XResultResponse or
// XResult), so a new revision needs new files, not new code. The few
// requests a schema gives no result for (ping, logging/setLevel,
// resources/subscribe, resources/unsubscribe) are answered by its
// EmptyResult. A method a revision does not define is not judged at all:
// an unknown method is the judge's business, not a schema violation.
//
// Tools carry schemas of their own (inputSchema, outputSchema), checked by
// CompileToolSchema offline: a chaos tool must not fetch what a server under
// test points it at, nor hang on it.
package mcpschema
