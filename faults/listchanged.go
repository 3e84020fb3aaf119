package faults

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// listChanged tells the client a list changed while it waits on a call:
// clients that reload the list from their receive loop and wait for the
// answer there deadlock, and a client must cope with it arriving at any
// time, advertised or not.
var listChangedFamily = &Family{
	Name:  "list-changed",
	Doc:   "inject notifications/{tools,prompts,resources}/list_changed toward the client, by default mid-call (default on=c2s:request:tools/call: right after a tool call reaches the server)",
	Phase: After,
	On:    "c2s:request:tools/call",
	Params: []Param{
		{Name: "list", Type: TypeChoice, Choices: []string{"tools", "prompts", "resources", "all"}, Default: "tools", Doc: "which list changed; all sends one notification for each"},
		streamParam("write the notification into that stream, where a server sends a change that relates to no call"),
	},
	New: func(v Values) (Action, error) {
		return listChanged{list: v.String("list"), stream: v.String("stream")}, nil
	},
	Example: "list-changed:list=all",
}

type listChanged struct{ list, stream string }

func (l listChanged) Fire(*FireContext) Effect {
	lists := []string{l.list}
	if l.list == "all" {
		lists = []string{"tools", "prompts", "resources"}
	}
	e := Effect{Stream: l.stream}
	for _, name := range lists {
		e.Inject = append(e.Inject, Injection{Dir: wire.ToClient, Raw: notification("notifications/"+name+"/list_changed", nil, 0)})
	}
	e.Detail = fmt.Sprintf("inject notifications/%s/list_changed toward the client", l.list)
	if l.list == "all" {
		e.Detail = "inject notifications/{tools,prompts,resources}/list_changed toward the client"
	}
	return e
}
