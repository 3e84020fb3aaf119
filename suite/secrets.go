package suite

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// secretWatch watches what a server sends for the credentials its client
// sends (--header): a server that sends one back, in an answer, an error
// page or a log line, hands it to whoever reads them. The judge never
// learns the values (they are not in the transcript of the client's
// requests), so the watch sits here, with the run's options; and no
// finding's words carry a value, the echo's own included.
type secretWatch struct {
	secrets []secret
	hit     *reports.Evidence
	hitName string
}

type secret struct {
	header string
	value  []byte
}

// minSecret is the shortest credential watched for: a shorter one would
// be met by chance.
const minSecret = 8

// newSecretWatch watches for the credentials of h, or is nil when it
// carries none worth watching.
func newSecretWatch(h http.Header) *secretWatch {
	var w secretWatch
	for _, k := range httpchaos.CredentialHeaders(h) {
		v := h.Get(k)
		if _, token, ok := strings.Cut(v, " "); ok {
			v = token // the scheme ("Bearer") is no secret
		}
		if len(v) >= minSecret {
			w.secrets = append(w.secrets, secret{header: k, value: []byte(v)})
		}
	}
	if len(w.secrets) == 0 {
		return nil
	}
	return &w
}

// see looks for a credential in what the server sent of e.
func (w *secretWatch) see(e *wire.Event) {
	if w.hit != nil {
		return
	}
	fromServer := e.Type == wire.EventReceived && e.Dir == wire.ToClient.String() ||
		e.Type == wire.EventStderr && e.Peer == "" || e.Type == wire.EventHTTP || e.Type == wire.EventForeign
	if !fromServer {
		return
	}
	b, err := e.Bytes()
	if err != nil || len(b) == 0 {
		return
	}
	for _, s := range w.secrets {
		if bytes.Contains(b, s.value) {
			w.hit = &reports.Evidence{Seq: e.Seq, TUS: e.T, Type: e.Type, Dir: e.Dir, Excerpt: "(what the server sent, holding the credential of " + s.header + ", left out)"}
			w.hitName = s.header
			return
		}
	}
}

// apply adds the finding of an echo to v, and takes every credential out
// of the words of v's findings.
func (w *secretWatch) apply(v *[]reports.Finding) {
	if w.hit != nil {
		where := "in a message"
		switch w.hit.Type {
		case wire.EventStderr:
			where = "in a log line"
		case wire.EventHTTP:
			where = "in an HTTP response body"
		case wire.EventForeign:
			where = "in its answer to a request mcpchaos sent with the client's credentials"
		}
		*v = append(*v, reports.NewFinding(reports.RuleCredentialsEchoed,
			fmt.Sprintf("the server sent back the credential the client sends in %s, %s: whoever reads it (the model the answer goes to, a shared log) can use it; the credential is left out of this report", w.hitName, where),
			[]reports.Evidence{*w.hit}))
	}
	for i := range *v {
		f := &(*v)[i]
		f.Message = w.redact(f.Message)
		for j := range f.Evidence {
			f.Evidence[j].Excerpt = w.redact(f.Evidence[j].Excerpt)
		}
	}
}

func (w *secretWatch) redact(s string) string {
	for _, sec := range w.secrets {
		s = strings.ReplaceAll(s, string(sec.value), "[credential of "+sec.header+"]")
	}
	return s
}
