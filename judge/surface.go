package judge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// surfaceChecks judge what a server does beyond answering: the promises of
// logging, subscriptions, pagination and tasks, each kept across several
// messages. Requests are read as the server received them, answers and
// notifications as it wrote them.
type surfaceChecks struct {
	// asked holds what the checks need of a request in flight, by id.
	asked map[string]surfaceAsk

	// levels are the levels the server accepted, by MCP session (over
	// HTTP, the Mcp-Session-Id of the exchange; "" on stdio and without
	// one): several clients through one proxy each set their own.
	levels map[string]logLevel
	// belowName is the level the first message below its session's level
	// was below.
	belowLevel *aggregate
	belowName  string

	// subscribed are the URIs a resources/subscribe was sent for;
	// unsubscribed, when the server answered their unsubscribe.
	subscribed   []string
	unsubscribed map[string]int64
	unsubscribe  *aggregate

	// listings maps a listing method to the cursors handed out in its
	// current listing (one that started with a request without cursor).
	listings map[string][]string
	repeats  *aggregate

	tasks     map[string]*taskRecord
	taskOrder []string
	left      *aggregate
	lost      *aggregate
	forgotten *aggregate
	failing   *aggregate
	foreign   *aggregate
	unasked   *aggregate
	// listed are the tasks tasks/list named, judged at the end.
	listed []listedTask
}

// surfaceAsk is a request the checks follow to its answer.
type surfaceAsk struct {
	// id is the request's id (the checks key it by session too).
	id     string
	method string
	// arg is what the request names: the level of logging/setLevel, the
	// URI of an unsubscribe, the cursor of a listing, the task of a
	// tasks/* request.
	arg    string
	asTask bool
	t      int64
	recv   reports.Evidence
}

// taskRecord is a task as the server described it to this session.
type taskRecord struct {
	id      string
	created reports.Evidence
	// session is the MCP session that created it (its Mcp-Session-Id;
	// "" on stdio and without one).
	session string
	// createdT and ttlUS bound its life (ttlUS 0: unlimited).
	createdT, ttlUS int64
	status          string
	// changedT is when status, statusMessage or lastUpdatedAt last changed;
	// polledT when the last tasks/get answered, and with what status.
	changedT, polledT int64
	lastPoll          reports.Evidence
	detail            string
	// terminal is the evidence of the first terminal report.
	terminal  *reports.Evidence
	completed bool
	cancelled bool
	// cancelAsked says a tasks/cancel for it reached the server.
	cancelAsked bool
	// endedAtShutdown says its terminal report came once the server's
	// stdin had closed: a server stops its tasks as it shuts down, which
	// says nothing of whether they would have finished.
	endedAtShutdown bool
	// cutBy is a fault's cut of the stream the server sends its own
	// messages on (the GET stream, the legacy session stream) while the
	// task ran: what the task asked the client meanwhile was lost.
	cutBy *cutEvent
}

// LogLevels are the syslog severities of MCP logging, lowest first.
// LogLevels are the syslog levels of the MCP schema's LoggingLevel, least
// severe first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// raceUS is how long after an answer on one HTTP stream a message on another
// may still have been sent before it: streams carry no order between them.
const raceUS = 200_000

// maxTracked bounds what the checks keep: requests in flight, tasks, URIs.
const maxTracked = 1024

func (c *surfaceChecks) init() {
	c.asked = map[string]surfaceAsk{}
	c.levels = map[string]logLevel{}
	c.unsubscribed = map[string]int64{}
	c.listings = map[string][]string{}
	c.tasks = map[string]*taskRecord{}
}

// params is the params object of a message, nil if it has none.
func params(e *wire.Event) []byte {
	b, err := e.Bytes()
	if err != nil {
		return nil
	}
	return member(b, "params")
}

// str reads a JSON string member, "" when absent or not a string.
func str(obj []byte, key string) string {
	v := member(obj, key)
	if kindOf(v) != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// logLevel is a level the server accepted: its index in LogLevels, its
// name, and when the answer came.
type logLevel struct {
	i    int
	name string
	at   int64
}

// sessionKey keys what the checks keep of a request, or of a listing, by
// the MCP session it belongs to, so that the requests of several clients
// through one proxy, each numbering from 1, stay apart.
func sessionKey(session, key string) string { return session + "\x00" + key }

// request notes a request the server received in MCP session sess.
func (c *surfaceChecks) request(e *wire.Event, sess string) {
	ask := surfaceAsk{id: e.ID, method: e.Method, t: e.T, recv: evidenceOf(e)}
	p := params(e)
	switch e.Method {
	case "logging/setLevel":
		ask.arg = str(p, "level")
	case "resources/subscribe":
		if uri := str(p, "uri"); uri != "" && len(c.subscribed) < maxTracked && !slices.Contains(c.subscribed, uri) {
			c.subscribed = append(c.subscribed, uri)
			delete(c.unsubscribed, uri)
		}
		return
	case "resources/unsubscribe", "resources/read":
		ask.arg = str(p, "uri")
		if e.Method == "resources/read" {
			return
		}
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "tasks/list":
		ask.arg = str(p, "cursor")
		if ask.arg == "" {
			c.listings[sessionKey(sess, e.Method)] = nil // a new listing
		}
	case "tools/call":
		ask.asTask = kindOf(member(p, "task")) == '{'
		if !ask.asTask {
			return
		}
	case "tasks/get", "tasks/result", "tasks/cancel":
		ask.arg = str(p, "taskId")
		if t := c.tasks[ask.arg]; t != nil && e.Method == "tasks/cancel" {
			t.cancelAsked = true
		}
	default:
		return
	}
	if len(c.asked) < maxTracked {
		c.asked[sessionKey(sess, e.ID)] = ask
	}
}

// out judges a message the server wrote: an answer to a request the checks
// follow, or a notification they judge.
func (c *surfaceChecks) out(j *Judger, e *wire.Event) {
	sess := j.sessionOf(e)
	switch e.Kind {
	case "notification":
		c.notification(j, e, sess)
		return
	case "response", "error":
	default:
		return
	}
	ask, ok := c.asked[sessionKey(sess, e.ID)]
	if !ok {
		return
	}
	delete(c.asked, sessionKey(sess, e.ID))
	b, err := e.Bytes()
	if err != nil {
		return
	}
	result := member(b, "result")
	failed := e.Kind == "error" || kindOf(result) != '{'
	switch ask.method {
	case "logging/setLevel":
		if i := slices.Index(LogLevels, ask.arg); i >= 0 && !failed && (len(c.levels) < maxTracked || c.levels[sess].name != "") {
			c.levels[sess] = logLevel{i: i, name: ask.arg, at: e.T}
		}
	case "resources/unsubscribe":
		if !failed && ask.arg != "" {
			c.unsubscribed[ask.arg] = e.T
		}
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "tasks/list":
		if failed {
			return
		}
		if ask.method == "tasks/list" {
			c.listedTasks(e, result, sess)
		}
		next := str(result, "nextCursor")
		if next == "" {
			return
		}
		listing := sessionKey(sess, ask.method)
		if slices.Contains(c.listings[listing], next) {
			if c.repeats == nil {
				c.repeats = &aggregate{}
			}
			c.repeats.add(ask.method+" "+fmt.Sprintf("%q", next), evidenceOf(e))
			c.listings[listing] = nil
			return
		}
		if len(c.listings[listing]) < maxTracked && (len(c.listings) < maxTracked || c.listings[listing] != nil) {
			c.listings[listing] = append(c.listings[listing], next)
		}
	case "tools/call":
		if !failed {
			c.created(e, member(result, "task"), sess)
			// Created while the client had no GET stream open after a
			// cut: what the task asks the client in that gap is lost.
			if t := c.tasks[str(member(result, "task"), "taskId")]; t != nil && t.cutBy == nil && j.tr.getGap != nil {
				t.cutBy = j.tr.getGap
			}
		}
	case "tasks/get", "tasks/cancel":
		t := c.tasks[ask.arg]
		if t == nil {
			return
		}
		if failed {
			if ask.method == "tasks/get" {
				c.forgot(e, t, ask)
			}
			return
		}
		c.report(j, e, t, result, ask)
		if ask.method == "tasks/get" {
			t.polledT, t.lastPoll = e.T, evidenceOf(e)
		}
	case "tasks/result":
		c.result(e, ask, failed, result)
	}
}

// created notes a task handed out in a CreateTaskResult.
func (c *surfaceChecks) created(e *wire.Event, task []byte, sess string) {
	id := str(task, "taskId")
	if id == "" || c.tasks[id] != nil || len(c.tasks) >= maxTracked {
		return
	}
	t := &taskRecord{id: id, session: sess, created: evidenceOf(e), createdT: e.T, changedT: e.T, status: str(task, "status")}
	var ttl float64
	if v := member(task, "ttl"); isNumber(kindOf(v)) && json.Unmarshal(v, &ttl) == nil && ttl > 0 {
		t.ttlUS = int64(ttl * 1000)
	}
	t.detail = str(task, "statusMessage") + "\x00" + str(task, "lastUpdatedAt")
	c.tasks[id] = t
	c.taskOrder = append(c.taskOrder, id)
	if terminalStatus(t.status) {
		t.terminal = &t.created
		t.completed, t.cancelled = t.status == "completed", t.status == "cancelled"
	}
}

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// report notes a status the server gave for task t: in a tasks/get or
// tasks/cancel answer (ask set), or a status notification (ask nil).
func (c *surfaceChecks) report(j *Judger, e *wire.Event, t *taskRecord, state []byte, ask surfaceAsk) {
	status := str(state, "status")
	if status == "" {
		return
	}
	detail := str(state, "statusMessage") + "\x00" + str(state, "lastUpdatedAt")
	if t.terminal != nil {
		// A report the server made knowing the task was terminal: the
		// answer to a request sent after the terminal report reached the
		// client. A notification is not one: SDKs queue them apart from
		// answers (mcp-go delivers a tool's notifications after its
		// answer), so a late one may be stale.
		if status != t.status && ask.method != "" && ask.recv.Seq > t.terminal.Seq {
			if c.left == nil {
				c.left = &aggregate{}
			}
			c.left.add(fmt.Sprintf("%s (%s, then %s)", t.id, t.status, status), *t.terminal, evidenceOf(e))
		}
		return
	}
	if terminalStatus(status) && j.pc.stdinClose != nil {
		// Stopped as the server shuts down: what it was before stands.
		ev := evidenceOf(e)
		t.terminal, t.endedAtShutdown = &ev, true
		return
	}
	if status != t.status || detail != t.detail {
		t.status, t.detail, t.changedT = status, detail, e.T
	}
	if !terminalStatus(status) {
		c.waitingOnTask(j, t, e)
	}
	if terminalStatus(status) {
		ev := evidenceOf(e)
		t.terminal = &ev
		t.completed, t.cancelled = status == "completed", status == "cancelled"
		// Stopped with nobody asking: no tasks/cancel, no fault, no
		// shutdown under way.
		if t.cancelled && !t.cancelAsked && !j.fired && j.pc.stdinClose == nil && j.end == nil {
			if c.unasked == nil {
				c.unasked = &aggregate{}
			}
			c.unasked.add(t.id, t.created, ev)
		}
	}
}

// waitingOnTask counts a report of a task still running as progress of the
// tasks/result requests waiting on it: a receiver MUST hold tasks/result
// until the task is terminal (MCP 2025-11-25, Basic › Utilities › Tasks ›
// Result Retrieval), so a requestor that asked early (as it should on
// input_required) waits as long as the task runs, as a request waits while
// progress comes.
func (c *surfaceChecks) waitingOnTask(j *Judger, t *taskRecord, e *wire.Event) {
	ev := evidenceOf(e)
	for _, ask := range c.asked {
		if ask.method != "tasks/result" || ask.arg != t.id {
			continue
		}
		for _, r := range j.tr.open[ask.id] {
			r.progress++
			r.lastProgress = &ev
		}
	}
}

// forgot judges an error answer to a tasks/get or tasks/result for a task
// the server handed out.
func (c *surfaceChecks) forgot(e *wire.Event, t *taskRecord, ask surfaceAsk) {
	if t.cancelled || (t.ttlUS > 0 && ask.t > t.createdT+t.ttlUS) {
		return // cancelled tasks may be deleted at any time; others after their ttl
	}
	if c.forgotten == nil {
		c.forgotten = &aggregate{}
	}
	c.forgotten.add(t.id, t.created, evidenceOf(e))
}

// result judges the answer to tasks/result.
func (c *surfaceChecks) result(e *wire.Event, ask surfaceAsk, failed bool, result []byte) {
	t := c.tasks[ask.arg]
	if t == nil {
		return
	}
	// Only what the server had said before the request counts: a task
	// still working when tasks/result was sent may fail in the meantime.
	if !t.completed || t.terminal.Seq > ask.recv.Seq || (t.ttlUS > 0 && ask.t > t.createdT+t.ttlUS) {
		return
	}
	switch {
	case e.Kind == "error":
		if c.lost == nil {
			c.lost = &aggregate{}
		}
		c.lost.add(t.id, *t.terminal, evidenceOf(e))
	case string(member(result, "isError")) == "true":
		if c.failing == nil {
			c.failing = &aggregate{}
		}
		c.failing.add(t.id, *t.terminal, evidenceOf(e))
	}
}

// listedTasks judges a tasks/list page: every task in it must be one this
// session created.
//
// Judged once the record ends: over HTTP the listing may be recorded before
// the answer that created a task, on another stream.
func (c *surfaceChecks) listedTasks(e *wire.Event, result []byte, sess string) {
	elements(member(result, "tasks"), func(task []byte) bool {
		if id := str(task, "taskId"); id != "" && len(c.listed) < maxTracked {
			c.listed = append(c.listed, listedTask{id, evidenceOf(e), sess})
		}
		return true
	})
}

type listedTask struct {
	id string
	ev reports.Evidence
	// session is the MCP session whose tasks/list listed it.
	session string
}

func (c *surfaceChecks) notification(j *Judger, e *wire.Event, sess string) {
	switch e.Method {
	case "notifications/message":
		set, ok := c.levels[sess]
		if !ok {
			return
		}
		level := str(params(e), "level")
		i := slices.Index(LogLevels, level)
		if i < 0 || i >= set.i || (j.http && e.T-set.at < raceUS) {
			return
		}
		if c.belowLevel == nil {
			c.belowLevel, c.belowName = &aggregate{}, set.name
		}
		c.belowLevel.add(level, evidenceOf(e))
	case "notifications/resources/updated":
		if j.http && len(c.subscribed) == 0 {
			// On HTTP a server may keep subscriptions across the
			// sessions of one client; no session's record tells.
			return
		}
		uri := str(params(e), "uri")
		if uri == "" {
			return
		}
		var under string
		for _, s := range c.subscribed {
			if uri == s || strings.HasPrefix(uri, strings.TrimSuffix(s, "/")+"/") {
				under = s
				break
			}
		}
		why := ""
		switch at, gone := c.unsubscribed[under]; {
		case under == "":
			why = uri + " (never subscribed)"
		case gone && !(j.http && e.T-at < raceUS):
			why = uri + " (after its unsubscribe was answered)"
		}
		if why != "" {
			if c.unsubscribe == nil {
				c.unsubscribe = &aggregate{}
			}
			c.unsubscribe.add(why, evidenceOf(e))
		}
	case "notifications/tasks/status":
		p := params(e)
		if t := c.tasks[str(p, "taskId")]; t != nil {
			c.report(j, e, t, p, surfaceAsk{})
		}
	}
}

// cut notes a fault's cut of a stream: one that carries the server's own
// messages (the client's GET stream, the legacy session stream) takes with
// it whatever a running task asks the client meanwhile.
func (c *surfaceChecks) cut(cut *cutEvent) {
	if !cut.get && !cut.legacy {
		return
	}
	for _, t := range c.tasks {
		if t.terminal == nil && t.cutBy == nil {
			t.cutBy = cut
		}
	}
}

// lostDuring is a request of the server's, sent while task t ran, that the
// relay never delivered to the client (a fault cut its stream, or dropped
// it), or nil.
func lostDuring(j *Judger, t *taskRecord) *lostRequest {
	for i := range j.tr.asked.lost {
		if l := &j.tr.asked.lost[i]; l.seq > t.created.Seq && l.t <= t.polledT {
			return l
		}
	}
	return nil
}

// findings makes the surface's findings. end is when the record ends.
func (c *surfaceChecks) findings(j *Judger) []reports.Finding {
	var fs []reports.Finding
	add := func(g *aggregate, rule, what string) {
		if g == nil {
			return
		}
		fs = append(fs, reports.NewFinding(rule, fmt.Sprintf("%s: %s", what, idList(g.ids, g.count)), g.evidence))
	}
	for _, l := range c.listed {
		// Through a proxy several clients share (proxy --report), a task
		// another session created is as foreign to this one as a task
		// nobody here created.
		if t := c.tasks[l.id]; t == nil || t.session != l.session {
			if c.foreign == nil {
				c.foreign = &aggregate{}
			}
			if !slices.Contains(c.foreign.ids, l.id) {
				c.foreign.add(l.id, l.ev)
			}
		}
	}
	for _, id := range c.taskOrder {
		t := c.tasks[id]
		if (t.terminal != nil && !t.endedAtShutdown) || t.polledT == 0 {
			continue
		}
		stuck := t.polledT - t.changedT
		pastTTL := t.ttlUS > 0 && t.polledT > t.createdT+t.ttlUS
		if stuck < j.deadlineUS && !pastTTL {
			continue
		}
		if t.cutBy != nil {
			j.notes.add(fmt.Sprintf("task %s never reached a terminal status, but fault %s cut the stream the server sends its own messages on while it ran: a request of the task's (an elicitation, a sampling) sent there could not arrive, and the task may be waiting for its answer", t.id, t.cutBy.fault))
			continue
		}
		if l := lostDuring(j, t); l != nil {
			// Its work may be waiting for an answer to a question
			// mcpchaos kept from the client.
			j.notes.add(fmt.Sprintf("task %s never reached a terminal status, but the server's %s (id %s), sent while it ran, never reached the client (%s): the task may be waiting for its answer", t.id, l.method, l.id, l.why))
			continue
		}
		msg := fmt.Sprintf("task %s was still %s, unchanged for %s, when tasks/get last answered", t.id, t.status, words.Duration(stuck))
		if pastTTL {
			msg += fmt.Sprintf(", past its ttl of %s", words.Duration(t.ttlUS))
		}
		f := reports.NewFinding(reports.RuleTaskNeverFinished, msg+"; it never reached a terminal status", []reports.Evidence{t.created, t.lastPoll})
		fs = append(fs, f)
	}
	add(c.left, reports.RuleTaskLeftTerminal, "a task reported in a terminal status was reported in another one afterwards")
	add(c.lost, reports.RuleTaskResultLost, "tasks/result answered with an error for a task reported completed")
	add(c.forgotten, reports.RuleTaskForgotten, "tasks/get or tasks/result answered with an error for a task the server handed out, before its ttl ran out and not cancelled")
	add(c.failing, reports.RuleTaskCompletedFailing, "tasks/result was a tool error (isError) for a task reported completed, not failed")
	add(c.unasked, reports.RuleTaskCancelledUnasked, "tasks reported cancelled though nobody cancelled them: their results are lost")
	add(c.foreign, reports.RuleTaskNotOwned, "tasks/list listed tasks this session never created")
	add(c.unsubscribe, reports.RuleUpdateNotSubscribed, "notifications/resources/updated for a resource the client was not subscribed to")
	if c.belowLevel != nil {
		add(c.belowLevel, reports.RuleLogBelowLevel, fmt.Sprintf("log messages below the level %q the client set with logging/setLevel", c.belowName))
	}
	add(c.repeats, reports.RuleListCursorRepeats, "a listing handed out a cursor it had already handed out, so following nextCursor never ends")
	return fs
}
