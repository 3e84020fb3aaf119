package suite

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Issue 41: a server that sends back the client's credential is a finding
// whose words, and every other finding's, leave the value out.
func TestSecretWatch(t *testing.T) {
	if newSecretWatch(http.Header{"Authorization": {"Bearer short"}}) != nil || newSecretWatch(http.Header{"Accept": {"application/json-and-more"}}) != nil {
		t.Error("a short credential, or no credential, is watched")
	}
	w := newSecretWatch(http.Header{"Authorization": {"Bearer s3cret-token-1234"}})
	mine := wire.Event{Type: wire.EventReceived, Dir: "c2s", Seq: 4}
	mine.SetRaw([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"t":"s3cret-token-1234"}}}`))
	w.see(&mine) // the client's own message
	if w.hit != nil {
		t.Fatal("the client's own message counts as the server's echo")
	}
	echo := wire.Event{Type: wire.EventReceived, Dir: "s2c", Seq: 7}
	echo.SetRaw([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"token s3cret-token-1234"}]}}`))
	w.see(&echo)
	fs := []reports.Finding{{Kind: "crash", Message: "the server logged s3cret-token-1234", Evidence: []reports.Evidence{{Seq: 7, Excerpt: "| token s3cret-token-1234"}}}}
	w.apply(&fs)
	if len(fs) != 2 || fs[1].Rule != reports.RuleCredentialsEchoed || fs[1].Evidence[0].Seq != 7 {
		t.Fatalf("findings %+v, want the crash and credentials-echoed at seq 7", fs)
	}
	for _, f := range fs {
		text := f.Message
		for _, e := range f.Evidence {
			text += e.Excerpt
		}
		if strings.Contains(text, "s3cret-token-1234") {
			t.Errorf("a finding's words hold the credential: %q", text)
		}
	}
	if !strings.Contains(fs[0].Message, "[credential of Authorization]") {
		t.Errorf("message %q, want the credential named in its place", fs[0].Message)
	}
}
