package wire_test

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

func ExampleClassify() {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n",
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}` + "\n",
		`{"jsonrpc":"2.0","id":"a","result":{}}` + "\r\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n",
		`{"jsonrpc":"1.0","id":2,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":3,"method":"ping"` + "\n",
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]` + "\n",
	}
	for _, f := range frames {
		m := wire.Classify([]byte(f))
		fmt.Printf("%-12s id=%-4s method=%-22q token=%-2s era=%-9s problem=%q\n",
			m.Kind, m.ID, m.Method, m.ProgressToken, m.Era, m.Problem)
	}
	// Output:
	// request      id=1    method="initialize"           token=   era=stateful  problem=""
	// request      id="a"  method="tools/call"           token=7  era=stateless problem=""
	// notification id=     method="notifications/progress" token=7  era=          problem=""
	// response     id="a"  method=""                     token=   era=          problem=""
	// error        id=null method=""                     token=   era=          problem=""
	// invalid      id=2    method="ping"                 token=   era=          problem="\"jsonrpc\" is not \"2.0\""
	// invalid      id=     method=""                     token=   era=          problem="not JSON: unexpected end of frame"
	// invalid      id=     method=""                     token=   era=          problem="JSON-RPC batch (arrays are not MCP messages)"
}

func ExampleEvent_SetRaw() {
	var e wire.Event
	e.SetRaw([]byte("caf\xe9\n")) // Latin-1, not UTF-8
	line, _ := e.MarshalLine()
	fmt.Print(string(line))
	b, _ := e.Bytes()
	fmt.Printf("%q\n", b)
	// Output:
	// {"seq":0,"t_us":0,"type":"","size":5,"raw_b64":"Y2Fm6Qo="}
	// "caf\xe9\n"
}
