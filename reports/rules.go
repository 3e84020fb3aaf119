package reports

import (
	"fmt"
	"strings"
)

// Rule is what a finding holds against a peer: the requirement it breaks,
// where that requirement is written, and so how severe breaking it is. A
// finding's kind and severity come from its rule, never from the checker
// that found it, so that the table below (and docs/verdicts.md, which a test
// keeps equal to it) is the whole truth about severities.
//
// Severity follows the MCP specification: what it forbids (a MUST, a
// request left without its response) is an error; what it allows but a
// careful implementation avoids (a server that needs SIGTERM to stop) is a
// warning, which fails a run only under --strict.
type Rule struct {
	// ID is stable: reports and baselines name the rule by it.
	ID       string
	Kind     string
	Severity string
	// Says is the requirement, in words.
	Says string
	// Source is where it is written.
	Source string
}

// Rule IDs.
const (
	RuleUnanswered                = "unanswered-request"
	RuleUnansweredActive          = "unanswered-while-active"
	RuleUnansweredReusedID        = "unanswered-reused-id"
	RuleLostResponse              = "lost-response"
	RuleLostAtShutdown            = "lost-response-at-shutdown"
	RuleAcceptedNoStream          = "accepted-without-stream"
	RuleDuplicateResponse         = "duplicate-response"
	RuleUnknownResponse           = "unknown-response-id"
	RuleErrorBodyID               = "error-status-body-id"
	RuleCrashSignature            = "crash-signature"
	RuleCrashExit                 = "crash-exit"
	RuleCrashHTTPStatus           = "crash-http-status"
	RuleCrashSession              = "crash-session"
	RuleCrashAfterHalfClose       = "crash-after-half-close"
	RuleServedAfterDelete         = "served-after-delete"
	RuleUnknownSessionNot404      = "unknown-session-not-404"
	RuleDeadSessionReused         = "dead-session-reused"
	RuleNoNewSession              = "no-new-session-after-404"
	RuleGetStreamNotReopened      = "get-stream-not-reopened"
	RuleExitStatusAtShutdown      = "exit-status-at-shutdown"
	RuleShutdownSIGTERM           = "shutdown-needed-sigterm"
	RuleShutdownSIGKILL           = "shutdown-needed-sigkill"
	RuleHTTPShutdownSIGKILL       = "http-shutdown-needed-sigkill"
	RuleNotMCP                    = "not-an-mcp-message"
	RuleSchema                    = "schema"
	RuleInputNotValidated         = "input-not-validated"
	RuleMalformedUnanswered       = "malformed-request-unanswered"
	RuleOutputSchema              = "output-schema"
	RuleListedNotFound            = "listed-not-found"
	RuleCostGrowsWithInput        = "cost-grows-with-input"
	RuleRebindingServed           = "rebinding-served"
	RuleForeignOriginServed       = "foreign-origin-served"
	RuleNullOriginServed          = "null-origin-served"
	RuleForeignHostServed         = "foreign-host-served"
	RuleForeignOriginNot403       = "foreign-origin-not-403"
	RuleListensEverywhere         = "listens-on-every-interface"
	RuleSessionIDNotASCII         = "session-id-not-visible-ascii"
	RuleSessionIDGuessable        = "session-id-guessable"
	RuleCredentialsServed         = "made-up-credentials-served"
	RuleSessionWithoutCredentials = "session-served-without-credentials"
	RuleUnauthorizedChallenge     = "unauthorized-without-challenge"
	RuleCredentialsEchoed         = "credentials-echoed"
	RuleClientHang                = "client-hang"
	RuleClientLate                = "client-late"
	RuleClientFailed              = "client-failed"
	RuleClientLoggedCrash         = "client-logged-exception"
	RuleScenarioExpectation       = "scenario-expectation"
	RuleTaskNeverFinished         = "task-never-finished"
	RuleTaskLeftTerminal          = "task-left-terminal"
	RuleTaskResultLost            = "task-result-lost"
	RuleTaskForgotten             = "task-forgotten"
	RuleTaskCompletedFailing      = "task-completed-with-error"
	RuleTaskNotOwned              = "task-not-owned"
	RuleTaskCancelledUnasked      = "task-cancelled-unasked"
	RuleUpdateNotSubscribed       = "update-not-subscribed"
	RuleLogBelowLevel             = "log-below-level"
	RuleListCursorRepeats         = "list-cursor-repeats"
	RuleCrossSessionMessage       = "cross-session-message"
	RuleCrossSessionFault         = "cross-session-fault"
	RuleCrossSessionLost          = "cross-session-answer-lost"
	RuleCrossSessionUpdate        = "cross-session-subscription"
	RuleCrossSessionLogLevel      = "cross-session-log-level"
)

// KindExpectation is the kind of a finding that says a scenario file's
// expected findings: did not match the run (faults.ExpectationKind).
const KindExpectation = "expectation"

// Where the rules are written.
const (
	specLifecycle       = "MCP 2025-11-25, Basic › Lifecycle"
	specResponses       = "MCP 2025-11-25, Basic › Messages › Responses; JSON-RPC 2.0 §5"
	specRequests        = "MCP 2025-11-25, Basic › Messages › Requests"
	specStdio           = "MCP 2025-11-25, Basic › Transports › stdio"
	specStreamableHTTP  = "MCP 2025-11-25, Basic › Transports › Streamable HTTP"
	specSessions        = specStreamableHTTP + " › Session Management"
	specOrigin          = specStreamableHTTP + " › Security Warning (\"Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden\"; \"When running locally, servers SHOULD bind only to localhost\")"
	rebindingAdvisories = "the SDKs' DNS-rebinding advisories: TypeScript GHSA-w48q-cv73-mx4w, Python GHSA-9h52-p55h-vw2f, Go GHSA-xw59-hvm2-8pj6, Java GHSA-8jxr-pr72-r468"
	specNewSession      = "\"When a client receives HTTP 404 in response to a request containing an Mcp-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached\""
	jsonrpcReply        = "JSON-RPC 2.0 §4 (\"the Server MUST reply with a Response\")"
	specTasks           = "MCP 2025-11-25, Basic › Utilities › Tasks"
)

// Rules is every rule a finding can cite, in the order of the verdict table.
var Rules = []Rule{
	{RuleUnanswered, KindHang, SeverityError,
		"every request gets a response; one still unanswered past its deadline (which each progress notification for it restarts, up to --max-deadline) while its peer was alive is hung",
		jsonrpcReply + "; " + specLifecycle + " › Timeouts"},
	{RuleUnansweredActive, KindHang, SeverityWarning,
		"a request unanswered past its deadline while the server was still sending notifications on that request's own response stream (Streamable HTTP) when the wait ended: its handler runs, slower than the deadline, so a warning; only progress notifications for its token restart a deadline, so a client would have given up on it (send progress, or give it a longer --deadline)",
		specLifecycle + " › Timeouts; MCP 2025-11-25, Basic › Transports › Streamable HTTP (messages sent on a request's stream SHOULD relate to it)"},
	{RuleUnansweredReusedID, KindHang, SeverityWarning,
		"a request sent under the id of another still in flight (as the id-collision fault sends it, breaking the base protocol's \"The request ID MUST NOT have been previously used by the requestor within the same session\"), left unanswered past its deadline while the other request under that id was answered: the server answered one of the two and went on. The client broke the rule first, and a server may refuse to run a second request under an id it holds (go-sdk drops it by design), so a warning; a client that slips that way gets a call that never returns, where an error (or running both) would have told it",
		specRequests + "; " + jsonrpcReply},
	{RuleTaskNeverFinished, KindHang, SeverityError,
		"a task the requestor keeps polling reaches a terminal status (completed, failed, cancelled); one whose status stayed the same, and not terminal, for longer than the deadline while tasks/get kept answering, or past its own ttl, is stuck as a request left unanswered is (a task that reports progress in its status message or lastUpdatedAt restarts the deadline; if it is merely slow, give it a longer --deadline)",
		specTasks + " (\"Requestors SHOULD continue polling until the task reaches a terminal status\"; ttl: the time from creation before a task may be deleted); " + specLifecycle + " › Timeouts"},
	{RuleClientHang, KindHang, SeverityError,
		"a client finishes or fails: one still running past its hang horizon (--hang-after, 2m by default: twice the longest default request timeout of the MCP SDKs, the TypeScript SDK's 60s), or one that exited past its deadline only once mcpchaos's liveness ping reached it (without answering it), is waiting for something that will not come, or deadlocked on an answer it received but cannot deliver",
		specLifecycle + " › Timeouts (a sender SHOULD stop waiting)"},
	{RuleClientLate, KindHang, SeverityWarning,
		"a client that ended on its own past its deadline but before its hang horizon is not hung: it gave up at a finite timeout of its own (the TypeScript SDK's 60s request timeout, a retry budget), as the specification asks, but made its user wait for what it could have known sooner (the stream carrying its answer ended, the server answered an error status), hence a warning",
		specLifecycle + " › Timeouts (\"the sender SHOULD issue a cancellation notification for that request and stop waiting for a response\")"},
	{RuleLostResponse, KindLostResponse, SeverityError,
		"a peer that ends its output or exits on its own owes the answers to the requests it received",
		jsonrpcReply},
	{RuleLostAtShutdown, KindLostResponse, SeverityWarning,
		"its stdin had closed first: the stdio shutdown asks the server to exit, and says nothing of answering what is in flight, but the client loses those answers",
		specLifecycle + " › Shutdown › stdio"},
	{RuleAcceptedNoStream, KindLostResponse, SeverityError,
		"on the legacy HTTP+SSE transport every answer travels on the session's one event stream; a server that accepted (2xx) a request POSTed after that stream had closed, and never answered it, lost it: a server whose session has no stream must refuse the session's messages with an error status (404), so that its client reconnects (requests sent in the 100 ms after the stream closed, which may have raced the server's noticing, are not held against it)",
		jsonrpcReply + "; MCP 2024-11-05, Basic › Transports › HTTP with SSE (server messages are sent as SSE events on the client's stream)"},
	{RuleDuplicateResponse, KindDuplicateResponse, SeverityError,
		"one request, one response: a second response for an id answers nothing (a late answer to a cancelled request is allowed once)",
		specResponses},
	{RuleUnknownResponse, KindUnknownResponse, SeverityError,
		"a response carries the id of the request it answers; an id never requested (or an error with id null when no unparseable frame was sent) answers nothing",
		specResponses},
	{RuleErrorBodyID, KindProtocolViolation, SeverityWarning,
		"the body of an HTTP error status that answers a request may hold a JSON-RPC error, which carries that request's id, or null when the server could not read it; an id that names no request breaks JSON-RPC's pairing of answers to requests, but the status has answered the request, so no client is left waiting: a warning",
		specResponses + "; " + specStreamableHTTP},
	{RuleCrashSignature, KindCrash, SeverityError,
		"an unhandled exception, panic or runtime fatal error on stderr is the peer failing, whichever way it then exits; a traceback after which the peer went on serving (it answered requests after it, or was still serving when its stdin closed), or that its SDK logged as a handler's exception it caught, and that is followed by a clean exit is a handled exception; one printed after mcpchaos closed its output (half-close) is judged by crash-after-half-close",
		"the peer's runtime (what it prints on stderr when an exception, a panic or a fatal error escapes), on any transport"},
	{RuleCrashHTTPStatus, KindCrash, SeverityError,
		"an HTTP server's 5xx answer whose body carries a traceback, panic or Node.js error stack is an exception that escaped a handler to the HTTP layer: that handler crashed, whether or not the server serves on, and a request so answered got no JSON-RPC answer (a status a fault injected is not the server's)",
		"MCP 2025-11-25, Basic › Transports › Streamable HTTP (a POSTed request is answered with a JSON body or an event stream; a notification with 202, or an error status if it cannot be accepted); " + specResponses},
	{RuleCrashSession, KindCrash, SeverityError,
		"an exception that ended one of a server's sessions (the Python SDK's session manager logs \"Session … crashed\" with its traceback) is a crash of that session, although the process serves its other sessions on: the handlers running in it died unanswered, as a stdio server's do when an exception ends the process. A session its client ended (DELETE) may drop the requests in flight, but not by crashing; a traceback of one stream's writer that the SDK logs and closes (\"Error in SSE writer\", \"Error in message router\") stays a handled exception",
		"the peer's runtime (the traceback of the exception that escaped the session's task); " + specStreamableHTTP + " › Session Management"},
	{RuleCrashAfterHalfClose, KindCrash, SeverityWarning,
		"once mcpchaos has closed its output (half-close), a server's writes fail (EPIPE) and it can answer nothing, so exiting is fair; but an exception that the failed write raised and nothing caught, which ended the server (a Python traceback, Node's unhandled 'error' event, a Go panic, as the last thing it printed before a failing exit), is still a crash: a robust server catches the write error and shuts down cleanly. The fault made the write fail, hence a warning; dying of SIGPIPE, a non-zero exit with no exception, and an exception followed by a clean exit are notes",
		"the peer's runtime (what it prints when an exception escapes); POSIX write() (EPIPE when a pipe has no reader); " + specStdio},
	{RuleCrashExit, KindCrash, SeverityError,
		"a server runs until it is told to stop (a stdio server by its stdin closing, an HTTP server by SIGTERM); exiting with a non-zero status, or dying of a signal nobody sent, before that is a failure",
		specLifecycle + " › Shutdown › stdio"},
	{RuleExitStatusAtShutdown, KindCrash, SeverityWarning,
		"it exited with a non-zero status after its stdin closed: the stdio shutdown asks only that it exit, but the status tells whoever runs it that it failed",
		specLifecycle + " › Shutdown › stdio"},
	{RuleClientFailed, KindCrash, SeverityError,
		"a client whose every call stayed answerable (the faults delayed, reordered or added messages, all valid) must succeed",
		specLifecycle + " › Operation; the scenario's expect: success"},
	{RuleClientLoggedCrash, KindCrash, SeverityWarning,
		"a client program printed an exception's traceback and then exited 0 on its own: it did its work, and its SDK caught the exception, but a task of its transport failed (typically a reader that outlived the session and met a closed stream when one more message came), hence a warning",
		"the peer's runtime; " + specLifecycle + " › Shutdown"},
	{RuleShutdownSIGTERM, KindZombie, SeverityWarning,
		"the stdio shutdown is: close stdin, wait, SIGTERM, wait, SIGKILL; the server exited only on SIGTERM, which the specification allows, but its client waited the grace period for it",
		specLifecycle + " › Shutdown › stdio, step 2"},
	{RuleShutdownSIGKILL, KindZombie, SeverityError,
		"the server outlived its stdin closing and SIGTERM; SIGKILL is the specification's last resort, and whatever the server had not written is lost",
		specLifecycle + " › Shutdown › stdio, step 3"},
	{RuleHTTPShutdownSIGKILL, KindZombie, SeverityWarning,
		"an HTTP server is stopped with SIGTERM once its clients are gone; one still running after the grace period had to be killed, losing whatever it had not finished (the specification defines no HTTP shutdown, hence a warning)",
		"MCP 2025-11-25, Basic › Transports › Streamable HTTP (no shutdown is defined); POSIX SIGTERM"},
	{RuleNotMCP, KindProtocolViolation, SeverityError,
		"every line on the transport (over HTTP, every JSON body and event's data) is one JSON-RPC message: nothing else on stdout (logging belongs on stderr), no embedded newline, UTF-8, \"jsonrpc\": \"2.0\"",
		"MCP 2025-11-25, Basic (\"All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification\"); " +
			specStdio + " (\"MUST NOT write anything to its stdout that is not a valid MCP message\"); " +
			specStreamableHTTP + " (\"The body of the POST request MUST be a single JSON-RPC request, notification, or response\"; each SSE event's data is one message)"},
	{RuleServedAfterDelete, KindProtocolViolation, SeverityError,
		"once a server has accepted a DELETE of its session (2xx), it answers that session's later requests 404: a client starts a new session on that 404, and a server that serves on keeps a session its client believes gone (a request in flight when the DELETE came may be finished)",
		"MCP 2025-11-25, Basic › Transports › Streamable HTTP › Session Management (\"MUST respond to requests containing that session ID with HTTP 404 Not Found\")"},
	{RuleUnknownSessionNot404, KindProtocolViolation, SeverityWarning,
		"a request carrying an Mcp-Session-Id the server never issued (forged by mcpchaos, as a restarted server or another replica is shown a session it lost) is answered 404: that is the status on which a client starts a new session, and the one the specification gives a session the server terminated; a server that cannot tell an id it never issued from one it issued and lost in a restart strands its clients there with any other status (400 means a request without an id, 5xx a failure). The specification's MUST names terminated sessions, not ids never issued, hence a warning; a server that serves the id (it keeps no session it could forget) is noted",
		specSessions + " (\"MUST respond to requests containing that session ID with HTTP 404 Not Found\"; " + specNewSession + "; 400 is for requests without a session ID)"},
	{RuleDeadSessionReused, KindProtocolViolation, SeverityError,
		"a client whose request carrying its Mcp-Session-Id was answered 404 starts a new session; one that sent requests under that id again, and again after the 404 to such a retry, retries a session the server no longer has, without bound (a request already on its way when the 404 came, or one retry, is not held against it)",
		specSessions + " (" + specNewSession + ")"},
	{RuleNoNewSession, KindProtocolViolation, SeverityWarning,
		"a client whose request carrying its Mcp-Session-Id was answered 404 must start a new session (an initialize without a session id); one that instead failed and exited on its own used the dead id no more, and its program saw the failure, but the call failed where a new session would have served it, hence a warning (a client still waiting at its deadline is a hang instead)",
		specSessions + " (" + specNewSession + ")"},
	{RuleGetStreamNotReopened, KindProtocolViolation, SeverityWarning,
		"a client whose GET stream (the one it opened for the server's own messages) broke reopens it, as its reconnection delay allows (2 s, or the server's retry: plus 1 s); one that had not when the server had a message for it (a fault's notification or request that found no GET stream) loses every message the server sends outside a call, silently: opening the stream is optional and resuming it a SHOULD, hence a warning",
		specStreamableHTTP + " › Listening for Messages from the Server (the client MAY open a GET stream); › Resumability and Redelivery (to resume after a disconnection the client SHOULD issue a GET with Last-Event-ID)"},
	{RuleTaskLeftTerminal, KindProtocolViolation, SeverityError,
		"completed, failed and cancelled are terminal: a task reported in one of them is never reported in another status afterwards, and a cancelled task stays cancelled even if its work goes on to complete (a tasks/get sent after the terminal report must say so; on HTTP a status notification that may have raced it on another stream is not held against the server)",
		specTasks + " (\"Tasks with a completed, failed, or cancelled status are in a terminal state and MUST NOT transition to any other status\"; \"Once a task is cancelled, it MUST remain in cancelled status\")"},
	{RuleTaskResultLost, KindLostResponse, SeverityError,
		"a task reported completed finished its request successfully, and tasks/result MUST return that request's result: answering it with a JSON-RPC error loses the result the task was created for",
		specTasks + " (\"For tasks in a terminal status, receivers MUST return from tasks/result exactly what the underlying request would have returned\")"},
	{RuleTaskCancelledUnasked, KindLostResponse, SeverityWarning,
		"a task runs its request to an end: one reported cancelled though its requestor never sent tasks/cancel, no fault had fired and the session was not ending, was stopped by the server on its own (an SDK that runs the task under the request's context, which ends once the CreateTaskResult is sent), and its result is lost; the specification does not forbid a receiver to cancel, hence a warning",
		specTasks + " (\"cancelled: The request was cancelled before completion\"; \"Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution\")"},
	{RuleTaskForgotten, KindLostResponse, SeverityError,
		"a task id the server handed out (in a CreateTaskResult) names its task for the task's ttl: tasks/get or tasks/result for it answered with an error before the ttl ran out, when the task was not cancelled, loses the task and its result",
		specTasks + " (ttl: \"Time in milliseconds from creation before task may be deleted\"; \"After a task's ttl lifetime has elapsed, receivers MAY delete the task\"; cancelled tasks may be deleted at any time)"},
	{RuleTaskCompletedFailing, KindProtocolViolation, SeverityWarning,
		"a tool call whose result has isError set ends its task failed, not completed: a task reported completed whose tasks/result is a tool error tells the requestor the call succeeded when it did not (the specification's word is a lowercase should, hence a warning)",
		specTasks + " › Error Handling (\"For tasks that wrap tool call requests, when the tool result has isError set to true, the task should reach failed status\")"},
	{RuleTaskNotOwned, KindProtocolViolation, SeverityWarning,
		"tasks/list lists the requestor's own tasks: a listing that holds tasks this session never created shows one requestor's tasks, and their ids, to another; binding tasks to an authorization context is a MUST where there is one, and a server that cannot tell requestors apart SHOULD NOT declare tasks.list, hence a warning",
		specTasks + " › Security (\"receivers MUST ensure the returned task list includes only tasks associated with the requestor's authorization context\"; \"receivers that cannot identify requestors SHOULD NOT declare the tasks.list capability\")"},
	{RuleUpdateNotSubscribed, KindProtocolViolation, SeverityWarning,
		"notifications/resources/updated is for a resource the client subscribed to (or a sub-resource of it), until it unsubscribes: an update for a URI never subscribed, or sent after the server answered the unsubscribe, makes the client read what it did not ask to follow (the schema's should, hence a warning; on HTTP, an update within 200 ms of the unsubscribe's answer may have raced it on another stream)",
		"MCP 2025-11-25 schema (ResourceUpdatedNotification: \"This should only be sent if the client previously sent a resources/subscribe request\"); MCP 2025-11-25, Server › Resources › Subscriptions"},
	{RuleLogBelowLevel, KindProtocolViolation, SeverityWarning,
		"once the server has answered logging/setLevel, it sends log messages at that level and above only: a message of a lower level (debug after info was set) is one the client asked not to get (the schema's should, hence a warning; on HTTP, a message within 200 ms of the answer may have raced it on another stream)",
		"MCP 2025-11-25 schema (SetLevelRequest: \"The server should send all logs at this level and higher\"); MCP 2025-11-25, Server › Utilities › Logging"},
	{RuleListCursorRepeats, KindProtocolViolation, SeverityWarning,
		"a paginated listing ends: a nextCursor the server already handed out in the same listing leads a client that follows it, as the specification describes, round the same pages for ever; cursors are the server's to make stable (a SHOULD, hence a warning)",
		"MCP 2025-11-25, Server › Utilities › Pagination (the client continues with nextCursor until none comes; servers SHOULD provide stable cursors)"},
	{RuleSchema, KindProtocolViolation, SeverityError,
		"a server's results and notifications conform to the official MCP JSON schema of the session's revision (the negotiated protocolVersion; the schema.json the specification publishes, vendored with its commit and checksum, docs/schemas.md): a required field missing or null, a value of the wrong type or outside its enum breaks what every client parses. A server's own requests (sampling, roots, elicitation) are held to it too, and so is a client program under test: its requests, its results of the server's requests and its notifications",
		"MCP schema.json of the session's revision (2024-11-05 to 2026-07-28)"},
	{RuleMalformedUnanswered, KindHang, SeverityWarning,
		"a request whose envelope breaks the MCP schema (params null, an array, or missing where the method requires them; a tool name that is not a string) is still a request with an id, and is answered with an error (-32600 Invalid Request, -32602 Invalid params): one dropped without an answer leaves its sender waiting. No conforming client sends one (mcpchaos's hostile workload does), hence a warning; a server that crashes on one, or stops answering after it, is an error of its own",
		jsonrpcReply + "; JSON-RPC 2.0 §5 (Invalid Request, Invalid params); MCP 2025-11-25 schema (JSONRPCRequest: params is an object)"},
	{RuleInputNotValidated, KindProtocolViolation, SeverityWarning,
		"a tool call whose arguments break the inputSchema the server listed for the tool is refused, with a JSON-RPC error or a result with isError: one answered with a successful result ran the tool on input it never validated (a number where the schema wants a string, a required argument missing). The specification's MUST is in its security considerations, and a schema the server enforces more loosely than it declares is not a broken exchange, hence a warning",
		"MCP 2025-11-25, Server › Tools › Security Considerations (\"Servers MUST: Validate all tool inputs\"); Server › Tools › Error Handling (invalid arguments are reported in the tool result with isError)"},
	{RuleOutputSchema, KindProtocolViolation, SeverityError,
		"a tool that declares an outputSchema answers each successful call with structuredContent that conforms to it: a result without structuredContent, or with structuredContent the schema refuses, breaks what clients validate against",
		"MCP 2025-11-25, Server › Tools › Output Schema (\"If an output schema is provided: Servers MUST provide structured results that conform to this schema\")"},
	{RuleListedNotFound, KindProtocolViolation, SeverityWarning,
		"a tool, prompt or resource the server listed is there when a client uses it by the name (or URI) the list gave: one answered as unknown (\"Unknown tool: x\", \"Prompt x not found\", -32002 Resource not found) was listed but cannot be used, as when the list and the dispatch spell a name differently or a resource's listing outlives it. A list_changed notification between the listing and the use lets the item go. The specification lists what a server offers and has no MUST that the lists hold, hence a warning",
		"MCP 2025-11-25, Server › Tools › Listing Tools and Error Handling (\"Unknown tools\"); Server › Prompts › Listing Prompts; Server › Resources › Listing Resources and Error Handling (-32002 Resource not found)"},
	{RuleCostGrowsWithInput, KindHang, SeverityWarning,
		"a request's cost grows with its input no faster than the input: of mcpchaos's growth series (the same request at growing sizes: a near miss of a resource template with more list items each step, a tool's string argument longer each step), a step answered at least 250 ms late, 4 times the step before and growing at least quadratically with the input, after a step that had grown already (to 5 ms and twice its own predecessor: one slow answer after flat ones is a network lookup or a pause) (a URI template matched by a regular expression that backtracks, CVE-2026-0621; a string handled in quadratic time), or a step never answered after one whose time had jumped so. A request a few bytes longer costs many times the time, and every client waits with it; the specification asks servers to validate inputs and rate-limit, not for a bound on time, hence a warning (the request left unanswered is a hang of its own)",
		"MCP 2025-11-25, Server › Resources › Security Considerations (\"Servers MUST validate all resource URIs\"); Server › Tools › Security Considerations (\"Servers MUST: Validate all tool inputs; Rate limit tool invocations\")"},
	{RuleRebindingServed, KindSecurity, SeverityError,
		"a server on the user's machine refuses, before any method runs, a request whose Host and Origin both name a foreign site: the request a page of that site sends once DNS rebinding has pointed its name at the user's machine. One it serves (initialize or server/discover answered, a session issued) lets any web page the user opens use its tools with the user's rights (mcpchaos sends it with fault foreign-origin, from http://evil.example)",
		specOrigin + "; " + rebindingAdvisories},
	{RuleForeignOriginServed, KindSecurity, SeverityError,
		"a request with a foreign Origin is refused, with 403, even when its Host is the server's own: a server that checks only Host serves a page whose request reaches it under a name it accepts (a rebound name it was configured with, a proxy that rewrites Host). The Origin check is the one the specification makes a MUST",
		specOrigin},
	{RuleNullOriginServed, KindSecurity, SeverityError,
		"a request with Origin: null (what a sandboxed frame, a data: URL or a local file sends) is refused as an invalid Origin: it names no site the server could trust, and a page of any site can send it",
		specOrigin},
	{RuleForeignHostServed, KindSecurity, SeverityWarning,
		"a local server refuses a request whose Host names a foreign site (no Origin): DNS rebinding reaches it under the attacker's name, and a browser's requests that carry no Origin (a GET of the session's stream) are caught by the Host check alone. The specification's MUST is the Origin check, and the SDKs' fixes check Host as well, hence a warning",
		specOrigin + "; " + rebindingAdvisories},
	{RuleForeignOriginNot403, KindSecurity, SeverityWarning,
		"a request with an invalid Origin (foreign, or null) and the true Host is refused with HTTP 403 Forbidden: another status refuses it, but tells a client something else (400 a malformed request, 421 a misdirected one, 401 missing credentials). The request is refused either way, hence a warning",
		specOrigin},
	{RuleListensEverywhere, KindSecurity, SeverityWarning,
		"a local server that mcpchaos started from its command, at a loopback URL, listens on the loopback address, not on every interface (0.0.0.0, ::): bound to every interface, it is reached by any machine of the network the user's machine is on, its Host and Origin checks aside. Judged in the rebinding scenario; a server behind a reverse proxy, at a URL that is not on a loopback address, is judged on what it answers, not on where it listens",
		specOrigin},
	{RuleSessionIDNotASCII, KindProtocolViolation, SeverityError,
		"an Mcp-Session-Id holds visible ASCII characters only (0x21 to 0x7E): a client copies it into a header, where another character is refused or mangled. Judged in the rebinding scenario, on the ids of the probe's session and of the foreign handshakes",
		specSessions + " (\"The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)\")"},
	{RuleSessionIDGuessable, KindSecurity, SeverityWarning,
		"an Mcp-Session-Id cannot be guessed: one of fewer than about 64 random bits (estimated from its length and the characters it draws from, a label such as mcp-session- left out), or ids of one server that differ only by a small count at their end, let a client of another user reach that user's session. Judged on the ids one server process issued: in the rebinding scenario, the probe's and the foreign handshakes'; in the scenarios of several sessions, every client's. The specification's word is SHOULD, hence a warning",
		specSessions + " (\"The session ID SHOULD be globally unique and cryptographically secure (e.g., a securely generated UUID, a JWT, or a cryptographic hash)\"); MCP 2025-11-25, Security Best Practices › Session Hijacking"},
	{RuleCredentialsServed, KindSecurity, SeverityError,
		"a server that refuses a request without credentials refuses one with a malformed credential, or a made-up one of the same form, too: serving it takes any credential of the right form for a valid one (mcpchaos sends them with fault credentials, from the credentials --header gave; a server that serves the request without credentials wants none, and is not judged)",
		"MCP 2025-11-25, Basic › Authorization › Token Handling (\"MCP servers MUST validate access tokens\"; \"Invalid or expired tokens MUST receive a HTTP 401 response\")"},
	{RuleSessionWithoutCredentials, KindSecurity, SeverityError,
		"a server that wants credentials checks them on every request, the requests of a session it opened included: a request in the client's session without its credentials, or with made-up ones, served, lets whoever has the session id act as the session's user",
		"MCP 2025-11-25, Security Best Practices › Session Hijacking (\"MCP servers that implement authorization MUST verify all inbound requests\"; \"MCP Servers MUST NOT use sessions for authentication\")"},
	{RuleUnauthorizedChallenge, KindSecurity, SeverityWarning,
		"a server that wants credentials refuses a request without valid ones with 401 Unauthorized and a WWW-Authenticate challenge: another status, or a 401 without a challenge, refuses it but does not tell a client how to authorize (HTTP says a 401 MUST carry one; an MCP server that implements authorization points to its resource metadata there). The request is refused either way, hence a warning",
		"RFC 9110 §15.5.2 (\"The server generating a 401 response MUST send a WWW-Authenticate header field\"); MCP 2025-11-25, Basic › Authorization › Authorization Server Discovery"},
	{RuleCredentialsEchoed, KindSecurity, SeverityError,
		"a server never sends back a credential its client sends (--header's Authorization, Cookie or token headers): in an answer, a notification, an error page or a log line it reaches whoever reads them, the model the answer goes to or a shared log. The value is left out of the report, which says where it was",
		"MCP 2025-11-25, Server › Utilities › Logging › Security (\"Log messages MUST NOT contain: Credentials or secrets\"); Basic › Authorization › Security Considerations"},
	{RuleCrossSessionMessage, KindCrossSession, SeverityError,
		"what a server sends for one client's session goes to that client alone: an answer to its request, a progress notification for its token, a log message or a server-to-client request made while handling its call, and anything that carries what that client sent (its marker: mcpchaos gives each session's client its own, in its clientInfo, progress tokens and string arguments) delivered on another session's streams, or answering another session's request, is one user's data given to another (a notifications/*/list_changed broadcast to every session carries nothing of anyone's, and is allowed; so is shared state a session reads back with a request that named none of its own)",
		jsonrpcReply + " (the Response goes to the Client that made the call); " + specStreamableHTTP + " (the answer to a POSTed request, and the messages before it, which SHOULD relate to it, go on that POST's stream; the server MUST NOT broadcast the same message across multiple streams); " + specSessions + "; MCP 2025-11-25, Security Best Practices › Session Hijacking"},
	{RuleCrossSessionLost, KindCrossSession, SeverityError,
		"with several clients at once and no fault anywhere, each is answered as it would be alone: a request one session never got answered (or lost) while another session's request of the same id and method, sent at once, was answered, lost its answer to the other client's presence (a server that keeps one answer route for every session sends it to the wrong one; when the answer carries nothing of its sender's, where it went cannot be told, and cross-session-message names it when it can)",
		jsonrpcReply + "; " + specSessions},
	{RuleCrossSessionUpdate, KindCrossSession, SeverityWarning,
		"notifications/resources/updated goes to the sessions that subscribed to the resource: an update for a resource another session subscribed to, delivered to a session that never did, shows one client's subscriptions to another and floods it with what it did not ask to follow (the schema's should, hence a warning; it replaces the receiving session's own update-not-subscribed finding, whose cause it names)",
		"MCP 2025-11-25 schema (ResourceUpdatedNotification: \"This should only be sent if the client previously sent a resources/subscribe request\"); MCP 2025-11-25, Server › Resources › Subscriptions"},
	{RuleCrossSessionLogLevel, KindCrossSession, SeverityWarning,
		"logging/setLevel sets the level of the session that sent it: a session that set a level and then received log messages below it, at a level another session had set since, shows the server keeping one level for every session, so one client's logging/setLevel changes what another receives (the schema's should, hence a warning; it replaces the receiving session's own log-below-level finding, whose cause it names)",
		"MCP 2025-11-25 schema (SetLevelRequest: \"The server should send all logs at this level and higher (i.e., more severe) to the client as notifications/message\"); MCP 2025-11-25, Server › Utilities › Logging"},
	{RuleCrossSessionFault, KindCrossSession, SeverityError,
		"a fault confined to one session (its stream cut, its DELETE, its client gone, its request stalled) is that session's: another session's calls, made while it struck, are answered as they are without it; one that fails (an HTTP error status, an error where the session's own twin got a result), hangs or passes its deadline was harmed by what happened to another user",
		specSessions + " (a session's lifetime is its own: the server ends it, or its client's DELETE does); " + jsonrpcReply + "; " + specLifecycle + " › Timeouts"},
	{RuleScenarioExpectation, KindExpectation, SeverityError,
		"a scenario file's findings: list is exactly the error findings its run must produce",
		"the scenario file"},
}

// ruleByID indexes Rules.
var ruleByID = func() map[string]Rule {
	m := make(map[string]Rule, len(Rules))
	for _, r := range Rules {
		if _, dup := m[r.ID]; dup {
			panic("reports: two rules have the id " + r.ID)
		}
		m[r.ID] = r
	}
	return m
}()

// LookupRule returns the rule of an id.
func LookupRule(id string) (Rule, bool) {
	r, ok := ruleByID[id]
	return r, ok
}

// NewFinding starts a finding under a rule: its kind, severity and rule come
// from the rule. An unknown id is a bug in mcpchaos, caught by the tests.
func NewFinding(ruleID, message string, evidence []Evidence) Finding {
	r, ok := ruleByID[ruleID]
	if !ok {
		panic("reports: no rule " + ruleID)
	}
	return Finding{Kind: r.Kind, Severity: r.Severity, Rule: r.ID, Message: message, Evidence: evidence}
}

// RulesTable renders Rules as the Markdown table of docs/verdicts.md.
func RulesTable() string {
	var b strings.Builder
	b.WriteString("| kind | severity | rule | what it holds against the peer | where it is written |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, r := range Rules {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", r.Kind, r.Severity, r.ID, escapeCell(r.Says), escapeCell(r.Source))
	}
	return b.String()
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
