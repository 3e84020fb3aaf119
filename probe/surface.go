package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bounds on the workload beyond tools, so that a server listing hundreds of
// prompts or resources gets a run of bounded size and time.
const (
	maxPromptGets    = 8
	maxReads         = 8
	maxTemplateReads = 4
	maxCompletions   = 12
)

// logLevel is the level the probe sets with logging/setLevel: above debug,
// so that a server that sends debug messages anyway can be told from one
// that honours the level (the judge's log-below-level rule).
const logLevel = "info"

// otherSessionsLogLevel is the level the sessions after the first set in a
// run of several: below the first's, so that a server keeping one level
// for every session sends the first session the debug messages another
// asked for (package crosssession), while a session that set debug can
// get nothing below its level whatever the server does.
const otherSessionsLogLevel = "debug"

// logLevel is the level this session sets.
func (c *Config) logLevel() string {
	if c.Session > 1 {
		return otherSessionsLogLevel
	}
	return logLevel
}

// defaultValue fills a prompt argument or a template variable for which the
// server offered no completion: digits pass where a name, an id or an index
// is expected.
const defaultValue = "1"

type listedPrompt struct {
	Name      string `json:"name"`
	Arguments []struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	} `json:"arguments"`
}

type listedResource struct {
	URI string `json:"uri"`
}

type listedTemplate struct {
	URITemplate string `json:"uriTemplate"`
}

// surface is what the workload exercises of a server beyond its tools:
// prompts, resources, resource templates, completions, logging and
// subscriptions. explore does it all but the unsubscribe, which end does
// once the tool calls are over, so that the subscription is live while
// the server works.
type surface struct {
	s          *session
	caps       serverCapabilities
	subscribed string
	// prompts and templates are the sampled listings, which the hostile
	// workload builds on.
	prompts   []listedPrompt
	templates []string
}

func (s *session) explore(caps serverCapabilities) *surface {
	sf := &surface{s: s, caps: caps}
	stateful := !s.stateless()
	if declared(caps.Logging) && stateful {
		// First, so that every log message after its answer is judged
		// against the level.
		s.awaitLevelTurn()
		s.roundTrip("logging/setLevel", map[string]any{"level": s.cfg.logLevel()}, "")
	} else if declared(caps.Logging) {
		s.why("logging/setLevel", "the 2026-07-28 revision has no logging/setLevel")
	}
	if s.cfg.LevelSet != nil {
		s.cfg.LevelSet()
	}
	prompts := sf.listPrompts()
	resources, templates := sf.listResources()
	sf.prompts, sf.templates = prompts, templates
	values := sf.complete(prompts, templates)
	read := sf.getAndRead(prompts, resources, templates, values)
	if caps.subscribe() && stateful {
		sf.subscribe(read)
	} else if caps.subscribe() {
		s.why("resources/subscribe", "the 2026-07-28 revision has no resources/subscribe (changes come on subscriptions/listen)")
	}
	return sf
}

// awaitLevelTurn waits, at most the deadline, for the sessions whose level
// goes first (Config.LevelAfter).
func (s *session) awaitLevelTurn() {
	if s.cfg.LevelAfter == nil {
		return
	}
	t := time.NewTimer(s.cfg.Deadline)
	defer t.Stop()
	select {
	case <-s.cfg.LevelAfter:
	case <-t.C:
	case <-s.ctx.Done():
	}
}

func (sf *surface) listPrompts() []listedPrompt {
	s := sf.s
	if !declared(sf.caps.Prompts) {
		return nil
	}
	smp := newSample[listedPrompt](maxPromptGets, s.cfg.Seed, "prompts")
	end := s.listPages("prompts/list", func(result json.RawMessage) {
		var page struct {
			Prompts []listedPrompt `json:"prompts"`
		}
		if json.Unmarshal(result, &page) == nil {
			for _, p := range page.Prompts {
				if p.Name != "" {
					smp.offer(p)
				}
			}
		}
	})
	s.sampled(smp.note("prompts/get", "prompts"))
	if smp.seen == 0 {
		s.whyNoItems("prompts/get", "prompts/list", end, "the server listed no prompts")
	}
	return smp.items()
}

func (sf *surface) listResources() ([]string, []string) {
	s := sf.s
	if !declared(sf.caps.Resources) {
		return nil, nil
	}
	res := newSample[string](maxReads, s.cfg.Seed, "resources")
	resEnd := s.listPages("resources/list", func(result json.RawMessage) {
		var page struct {
			Resources []listedResource `json:"resources"`
		}
		if json.Unmarshal(result, &page) == nil {
			for _, r := range page.Resources {
				if r.URI != "" {
					res.offer(r.URI)
				}
			}
		}
	})
	s.sampled(res.note("resources/read", "resources"))
	tpl := newSample[string](maxTemplateReads, s.cfg.Seed, "templates")
	tplEnd := s.listPages("resources/templates/list", func(result json.RawMessage) {
		var page struct {
			ResourceTemplates []listedTemplate `json:"resourceTemplates"`
		}
		if json.Unmarshal(result, &page) == nil {
			for _, t := range page.ResourceTemplates {
				if t.URITemplate != "" {
					tpl.offer(t.URITemplate)
				}
			}
		}
	})
	s.sampled(tpl.note("resources/read", "resource templates"))
	if res.seen == 0 && tpl.seen == 0 {
		end := resEnd
		if end != listFailed {
			end = tplEnd
		}
		s.whyNoItems("resources/read", "resources/list", end, "the server listed no resources and no resource templates")
	}
	return res.items(), tpl.items()
}

// whyNoItems says why method, which needs an item of listing, was not
// sent: the listing failed (perhaps because an earlier request went
// unanswered), or listed nothing.
func (s *session) whyNoItems(method, listing string, end listEnd, none string) {
	if end != listFailed {
		s.why(method, none)
		return
	}
	if s.goOn(method) {
		s.why(method, listing+" was not answered with a listing")
	}
}

// completionKey names one value to complete: a prompt's argument or a
// template's variable.
type completionKey struct{ ref, name string }

// complete asks completion/complete for the arguments of the sampled prompts
// and the variables of the sampled templates, at most maxCompletions, and
// returns the first value offered for each. A prompt's earlier arguments go
// in the request's context, as a client filling a form sends them.
func (sf *surface) complete(prompts []listedPrompt, templates []string) map[completionKey]string {
	s := sf.s
	values := map[completionKey]string{}
	if !declared(sf.caps.Completions) {
		return values
	}
	asked := 0
	ask := func(ref map[string]any, key completionKey, context map[string]string) bool {
		if asked == maxCompletions {
			return false
		}
		asked++
		fields := map[string]any{"ref": ref, "argument": map[string]any{"name": key.name, "value": ""}}
		if len(context) > 0 {
			fields["context"] = map[string]any{"arguments": context}
		}
		result, ok := s.roundTrip("completion/complete", fields, "")
		if !ok {
			// Unanswered or refused: the rest would fare no better,
			// and each unanswered one costs a deadline.
			asked = maxCompletions
			return false
		}
		var r struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		if json.Unmarshal(result, &r) == nil && len(r.Completion.Values) > 0 && r.Completion.Values[0] != "" {
			values[key] = r.Completion.Values[0]
		}
		return true
	}
	for _, p := range prompts {
		context := map[string]string{}
		for _, a := range p.Arguments {
			key := completionKey{"prompt:" + p.Name, a.Name}
			if !ask(map[string]any{"type": "ref/prompt", "name": p.Name}, key, context) {
				break
			}
			context[a.Name] = valueOr(values, key)
		}
	}
	for _, t := range templates {
		for _, v := range templateVars(t) {
			if !ask(map[string]any{"type": "ref/resource", "uri": t}, completionKey{"template:" + t, v}, nil) {
				break
			}
		}
	}
	if asked == 0 {
		s.why("completion/complete", "no listed prompt has arguments and no listed template has variables")
	}
	return values
}

func valueOr(values map[completionKey]string, key completionKey) string {
	if v, ok := values[key]; ok {
		return v
	}
	return defaultValue
}

// getAndRead gets each sampled prompt with its required arguments (valued
// by completion where the server offered one), reads the sampled resources
// and a URI made from each sampled template, and returns the URIs whose read
// succeeded. The requests go together and are waited for together: a
// server that answers none costs one deadline, and its prompt and resource
// handlers run at once, as a client's would under load (the eof-surface
// scenario closes the transport under them).
func (sf *surface) getAndRead(prompts []listedPrompt, resources, templates []string, values map[completionKey]string) []string {
	s := sf.s
	type sent struct {
		p   *pending
		uri string
	}
	var all []sent
	// uri is the resource a read reads, "" for a prompt.
	send := func(method string, fields map[string]any, target, uri string) bool {
		if !s.goOn(method) {
			return false
		}
		p, err := s.request(method, s.params(fields, nil, s.stateless()), target)
		if err != nil {
			return false
		}
		all = append(all, sent{p, uri})
		return true
	}
	for _, p := range prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = valueOr(values, completionKey{"prompt:" + p.Name, a.Name})
			}
		}
		fields := map[string]any{"name": p.Name}
		if len(args) > 0 {
			fields["arguments"] = args
		}
		if !send("prompts/get", fields, p.Name, "") {
			break
		}
	}
	uris := append([]string(nil), resources...)
	for _, t := range templates {
		uris = append(uris, expandTemplate(t, func(name string) string {
			return valueOr(values, completionKey{"template:" + t, name})
		}))
	}
	for _, uri := range uris {
		if !send("resources/read", map[string]any{"uri": uri}, uri, uri) {
			break
		}
	}
	var read []string
	for _, x := range all {
		<-x.p.done
		if x.uri != "" && x.p.answered && x.p.errText == "" && x.p.result != nil {
			read = append(read, x.uri)
		}
	}
	return read
}

// subscribe subscribes to the first resource that could be read (in a run
// of several sessions, session K to the Kth, in turn); end unsubscribes.
func (sf *surface) subscribe(read []string) {
	if len(read) == 0 {
		sf.s.why("resources/subscribe", "no resource could be read to subscribe to")
		return
	}
	uri := read[max(sf.s.cfg.Session-1, 0)%len(read)]
	if _, ok := sf.s.roundTrip("resources/subscribe", map[string]any{"uri": uri}, uri); ok {
		sf.subscribed = uri
	}
}

// end undoes what explore left running: the subscription.
func (sf *surface) end() {
	if sf.subscribed != "" {
		sf.s.roundTrip("resources/unsubscribe", map[string]any{"uri": sf.subscribed}, sf.subscribed)
	} else if sf.caps.subscribe() && !sf.s.stateless() {
		sf.s.why("resources/unsubscribe", "no subscription was made")
	}
}

// templateVars returns the variable names of an RFC 6570 URI template, in
// order, each once.
func templateVars(t string) []string {
	var names []string
	forEachExpression(t, func(_ byte, vars []string) string {
		for _, v := range vars {
			name := varName(v)
			if name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return ""
	})
	return names
}

// expandTemplate expands an RFC 6570 URI template (levels 1 to 4) with
// value giving each variable's value, a plain string: "{x}" and "{+x}" give
// the value, "{/x}" "/value", "{?x,y}" "?x=..&y=..", and so on. Values
// are percent-encoded as the operator asks.
func expandTemplate(t string, value func(name string) string) string {
	return expand(t, value, true)
}

// expand is expandTemplate, with the values percent-encoded or, without
// encode, written as they are (a list's commas kept as a list's).
func expand(t string, value func(name string) string, encode bool) string {
	return forEachExpression(t, func(op byte, vars []string) string {
		first, sep, named, ifEmpty, reserved := expansionOf(op)
		var out strings.Builder
		for i, v := range vars {
			name := varName(v)
			if name == "" {
				continue
			}
			val := value(name)
			if i == 0 {
				out.WriteString(first)
			} else {
				out.WriteString(sep)
			}
			if named {
				out.WriteString(name)
				if val == "" {
					out.WriteString(ifEmpty)
					continue
				}
				out.WriteByte('=')
			}
			if encode {
				val = pctEncode(val, reserved)
			}
			out.WriteString(val)
		}
		return out.String()
	})
}

// forEachExpression calls f for each {expression} of t with its operator (0
// for none) and its variable specs, and returns t with each expression
// replaced by what f returned. An unclosed brace is kept as it is.
func forEachExpression(t string, f func(op byte, vars []string) string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			b.WriteString(t)
			return b.String()
		}
		closing := strings.IndexByte(t[open:], '}')
		if closing < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:open])
		expr := t[open+1 : open+closing]
		var op byte
		if expr != "" && strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			op, expr = expr[0], expr[1:]
		}
		b.WriteString(f(op, strings.Split(expr, ",")))
		t = t[open+closing+1:]
	}
}

// varName strips a variable spec's modifier (":3", "*").
func varName(spec string) string {
	spec = strings.TrimSuffix(strings.TrimSpace(spec), "*")
	if i := strings.IndexByte(spec, ':'); i >= 0 {
		spec = spec[:i]
	}
	return spec
}

// expansionOf is RFC 6570's table of operators (Appendix A).
func expansionOf(op byte) (first, sep string, named bool, ifEmpty string, reserved bool) {
	switch op {
	case '+':
		return "", ",", false, "", true
	case '#':
		return "#", ",", false, "", true
	case '.':
		return ".", ".", false, "", false
	case '/':
		return "/", "/", false, "", false
	case ';':
		return ";", ";", true, "", false
	case '?':
		return "?", "&", true, "=", false
	case '&':
		return "&", "&", true, "=", false
	}
	return "", ",", false, "", false
}

// pctEncode percent-encodes what RFC 6570 does not let through: everything
// but unreserved characters, and with reserved also the reserved ones.
func pctEncode(s string, reserved bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~", c) >= 0:
			b.WriteByte(c)
		case reserved && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
