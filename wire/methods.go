package wire

// methodName returns the MCP method a frame names as a string. The methods of
// the specification come back as constants, so that classifying a frame
// allocates for its method only when the method is one of a peer's own.
func methodName(b []byte) string {
	switch string(b) {
	case "completion/complete":
		return "completion/complete"
	case "elicitation/create":
		return "elicitation/create"
	case "initialize":
		return "initialize"
	case "logging/setLevel":
		return "logging/setLevel"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/elicitation/complete":
		return "notifications/elicitation/complete"
	case "notifications/initialized":
		return "notifications/initialized"
	case "notifications/message":
		return "notifications/message"
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/prompts/list_changed":
		return "notifications/prompts/list_changed"
	case "notifications/resources/list_changed":
		return "notifications/resources/list_changed"
	case "notifications/resources/updated":
		return "notifications/resources/updated"
	case "notifications/roots/list_changed":
		return "notifications/roots/list_changed"
	case "notifications/subscriptions/acknowledged":
		return "notifications/subscriptions/acknowledged"
	case "notifications/tasks/status":
		return "notifications/tasks/status"
	case "notifications/tools/list_changed":
		return "notifications/tools/list_changed"
	case "ping":
		return "ping"
	case "prompts/get":
		return "prompts/get"
	case "prompts/list":
		return "prompts/list"
	case "resources/list":
		return "resources/list"
	case "resources/read":
		return "resources/read"
	case "resources/subscribe":
		return "resources/subscribe"
	case "resources/templates/list":
		return "resources/templates/list"
	case "resources/unsubscribe":
		return "resources/unsubscribe"
	case "roots/list":
		return "roots/list"
	case "sampling/createMessage":
		return "sampling/createMessage"
	case "server/discover":
		return "server/discover"
	case "subscriptions/listen":
		return "subscriptions/listen"
	case "tasks/cancel":
		return "tasks/cancel"
	case "tasks/get":
		return "tasks/get"
	case "tasks/list":
		return "tasks/list"
	case "tasks/result":
		return "tasks/result"
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	}
	return string(b)
}
