package probe

import "encoding/json"

// serverCapabilities is the part of a server's capabilities the workload
// depends on: a member that is present (not null) declares the feature.
type serverCapabilities struct {
	Tools     json.RawMessage `json:"tools"`
	Prompts   json.RawMessage `json:"prompts"`
	Resources json.RawMessage `json:"resources"`
	// Logging and Completions are objects with no members of interest.
	Logging     json.RawMessage `json:"logging"`
	Completions json.RawMessage `json:"completions"`
	Tasks       json.RawMessage `json:"tasks"`
}

func declared(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// subscribe says the server offers resources/subscribe (resources.subscribe
// true, MCP 2025-11-25, Server › Resources › Capabilities).
func (c serverCapabilities) subscribe() bool {
	var r struct {
		Subscribe bool `json:"subscribe"`
	}
	return declared(c.Resources) && json.Unmarshal(c.Resources, &r) == nil && r.Subscribe
}

// taskCapabilities is what capabilities.tasks says a requestor may do (MCP
// 2025-11-25, Basic › Utilities › Tasks › Capabilities): each member present
// declares the operation.
type taskCapabilities struct {
	// ToolCalls says tools/call may be augmented with a task
	// (tasks.requests.tools.call); without it no tool may be called as a
	// task, whatever its execution.taskSupport says.
	ToolCalls bool
	List      bool
	Cancel    bool
}

func (c serverCapabilities) tasks() taskCapabilities {
	var t struct {
		List     json.RawMessage `json:"list"`
		Cancel   json.RawMessage `json:"cancel"`
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	if !declared(c.Tasks) || json.Unmarshal(c.Tasks, &t) != nil {
		return taskCapabilities{}
	}
	return taskCapabilities{ToolCalls: declared(t.Requests.Tools.Call), List: declared(t.List), Cancel: declared(t.Cancel)}
}

// Methods a session may send, by what makes them callable. MethodToolCallTask
// is tools/call augmented with a task, which the coverage counts apart from
// a plain call: it reaches a different path of the server.
const (
	MethodToolCallTask = "tools/call (task)"
)

// callable lists, in a fixed order, the requests the server's capabilities
// make callable in era once the session is open (the handshake is not
// counted): the methods a complete workload sends. The stateless revision
// (2026-07-28) has no ping, logging/setLevel or resources/subscribe and
// unsubscribe (its changes come on subscriptions/listen), and its tasks are
// an extension with methods of their own.
func (c serverCapabilities) callable(era string) []string {
	var m []string
	if era != EraStateless {
		m = append(m, "ping")
	}
	if declared(c.Tools) {
		m = append(m, "tools/list", "tools/call")
	}
	if declared(c.Prompts) {
		m = append(m, "prompts/list", "prompts/get")
	}
	if declared(c.Resources) {
		m = append(m, "resources/list", "resources/read", "resources/templates/list")
		if c.subscribe() && era != EraStateless {
			m = append(m, "resources/subscribe", "resources/unsubscribe")
		}
	}
	if declared(c.Logging) && era != EraStateless {
		m = append(m, "logging/setLevel")
	}
	if declared(c.Completions) {
		m = append(m, "completion/complete")
	}
	// The 2026-07-28 revision moved tasks out of the core into an
	// extension (io.modelcontextprotocol/tasks) with another protocol: no
	// tasks/result, no tasks/list (SEP-2663). The core's task methods are
	// the stateful era's.
	if t := c.tasks(); era != EraStateless && (t.ToolCalls || t.List || t.Cancel) {
		if t.ToolCalls {
			m = append(m, MethodToolCallTask)
		}
		// tasks/get and tasks/result need no capability of their own:
		// they come with any task a requestor may create.
		m = append(m, "tasks/get", "tasks/result")
		if t.List {
			m = append(m, "tasks/list")
		}
		if t.Cancel {
			m = append(m, "tasks/cancel")
		}
	}
	return m
}
