package judge

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
)

// The stderr scanner reads a peer's stderr one line at a time and reports
// crash signatures: Python tracebacks (exception groups included), Go panics
// and fatal errors, Node.js uncaught errors. It keeps a bounded excerpt per
// crash and a few lines of look-back, never the whole stream, because a
// chatty server may log for hours.

// crashHit is one crash signature seen on stderr.
type crashHit struct {
	sig string
	// text is the line that names the crash (the exception line, the panic
	// message), for the finding's message.
	text string
	// seq and t are the stderr event of that line.
	seq, t int64
	// excerpt is the crash's stderr, shared by the hits of one traceback.
	excerpt *excerpt
	// caughtBy is the line by which the peer's SDK said it caught the
	// exception, when that line came just before the traceback.
	caughtBy string
	// site is where a Node.js error was made, as Node prints it above the
	// source line and its caret ("file:///…/streamableHttp.js:284").
	site string
	// sessionCrash is the line by which the peer's SDK said the exception
	// ended one of its sessions ("Session … crashed"), when that line came
	// just before the traceback: the SDK caught it only to keep its other
	// sessions alive.
	sessionCrash string
}

// excerpt keeps the head and the tail of a run of stderr lines: a traceback
// starts with where it was raised and ends with what was raised, and the
// middle of a deep stack is what a reader can most spare.
type excerpt struct {
	firstSeq, firstT int64
	head             []string
	tail             []string // a ring once full
	next             int
	total            int
}

const excerptHead = 10

func newExcerpt(seq, t int64) *excerpt { return &excerpt{firstSeq: seq, firstT: t} }

func (x *excerpt) add(line string) {
	x.total++
	line = words.Cut(line, maxStderrLine)
	if strings.Contains(line, "\n") {
		// One stderr event is one line; a recorder that let a newline
		// through must not make the excerpt longer than its line budget.
		line = strings.ReplaceAll(line, "\n", `\n`)
	}
	if len(x.head) < excerptHead {
		x.head = append(x.head, line)
		return
	}
	// One line of the budget goes to the "lines left out" marker.
	if len(x.tail) < maxStderrLines-excerptHead-1 {
		x.tail = append(x.tail, line)
		return
	}
	x.tail[x.next] = line
	x.next = (x.next + 1) % len(x.tail)
}

// lines returns the excerpt in order, marking what was left out.
func (x *excerpt) lines() []string {
	out := append([]string(nil), x.head...)
	if skipped := x.total - len(x.head) - len(x.tail); skipped > 0 {
		out = append(out, "… ("+strconv.Itoa(skipped)+" lines left out)")
	}
	out = append(out, x.tail[x.next:]...)
	out = append(out, x.tail[:x.next]...)
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

func (x *excerpt) evidence() reports.Evidence {
	return reports.Evidence{Seq: x.firstSeq, TUS: x.firstT, Type: "stderr", Excerpt: strings.Join(x.lines(), "\n")}
}

// recentLine is a line of look-back for Node.js, whose crash report puts the
// source line and a caret before the error.
type recentLine struct {
	text   string
	seq, t int64
}

const lookBack = 4

type stderrScanner struct {
	// emit receives each hit. It returns whether it wants the lines that
	// follow a Go or Node.js hit added to the hit's excerpt; a signature
	// already seen needs no second excerpt.
	emit func(crashHit) bool

	py pyBlock

	recent [lookBack]recentLine
	nrec   int

	// open is the excerpt of the last Go or Node.js hit, still taking the
	// lines that follow it (the goroutine dump, the JS stack).
	open     *excerpt
	openNode bool

	line        int
	lastNodeHit int // line of the last Node.js hit, for "Emitted 'error' event"
	// nodeErr is the last line shaped like a Node.js error, and its line
	// number, for an "Emitted 'error' event" whose throw site is missing.
	nodeErr     string
	nodeErrLine int
}

// maxScanLine bounds the work and memory per line: a signature is at the
// start of a line, and a 64 KiB line of JSON logged to stderr is no traceback.
const maxScanLine = 4096

func (s *stderrScanner) add(seq, t int64, text string) {
	s.line++
	if len(text) > maxScanLine {
		text = text[:maxScanLine]
	}
	if strings.Contains(text, "\x1b[") {
		text = ansi.ReplaceAllString(text, "") // Python 3.13+ colours tracebacks on a TTY
	}
	if s.py.active {
		if s.py.take(seq, t, text) {
			s.remember(seq, t, text)
			return
		}
		s.finishPy()
	}
	if s.py.begin(seq, t, text) {
		if prev, ok := s.back(1); ok {
			s.py.caughtBy = sdkCaught(prev.text)
			if s.py.sessionCrash = sdkSessionCrashed(prev.text); s.py.sessionCrash != "" {
				// The SDK's words are half the evidence: the excerpt
				// starts with them.
				s.py.x = newExcerpt(prev.seq, prev.t)
				s.py.x.add(prev.text)
				s.py.x.add(text)
			}
		}
		s.closeOpen()
		s.remember(seq, t, text)
		return
	}
	if sig, msg, ok := goSignature(text); ok {
		s.closeOpen()
		s.hit(crashHit{sig: sig, text: strings.Clone(msg), seq: seq, t: t}, nil, text, false)
		s.remember(seq, t, text)
		return
	}
	if sig, errLine, site, ctx, ok := s.nodeSignature(text); ok {
		s.closeOpen()
		s.lastNodeHit = s.line
		s.hit(crashHit{sig: sig, text: strings.Clone(strings.TrimSpace(errLine)), site: strings.Clone(site), seq: seq, t: t}, ctx, text, true)
		s.remember(seq, t, text)
		return
	}
	if s.open != nil {
		s.open.add(text)
		if s.open.total >= maxStderrLines || (s.openNode && strings.HasPrefix(text, "Node.js v")) {
			s.closeOpen()
		}
	}
	s.remember(seq, t, text)
}

// flush ends the stream: a traceback still open is complete now.
func (s *stderrScanner) flush() {
	if s.py.active {
		s.finishPy()
	}
	s.closeOpen()
}

// hit reports a Go or Node.js crash whose excerpt starts with the look-back
// ctx and the line that gave it away.
func (s *stderrScanner) hit(h crashHit, ctx []recentLine, line string, node bool) {
	first := recentLine{seq: h.seq, t: h.t}
	if len(ctx) > 0 {
		first = ctx[0]
	}
	h.excerpt = newExcerpt(first.seq, first.t)
	for _, c := range ctx {
		h.excerpt.add(c.text)
	}
	h.excerpt.add(line)
	if s.emit(h) {
		s.open, s.openNode = h.excerpt, node
	}
}

func (s *stderrScanner) closeOpen() { s.open = nil }

func (s *stderrScanner) remember(seq, t int64, text string) {
	copy(s.recent[:], s.recent[1:])
	s.recent[lookBack-1] = recentLine{text: text, seq: seq, t: t}
	if s.nrec < lookBack {
		s.nrec++
	}
}

// back returns the line i places before the current one (1 is the last).
func (s *stderrScanner) back(i int) (recentLine, bool) {
	if i > s.nrec {
		return recentLine{}, false
	}
	return s.recent[lookBack-i], true
}

func (s *stderrScanner) finishPy() {
	for _, h := range s.py.finish() {
		s.emit(h)
	}
}

// ---- Go ----

// goSignature recognises the first line the Go runtime prints when a program
// dies of a panic or a fatal error.
func goSignature(line string) (sig, msg string, ok bool) {
	switch {
	case strings.HasPrefix(line, "panic: "):
		return "go:panic", strings.TrimSpace(line[len("panic: "):]), true
	case strings.HasPrefix(line, "fatal error: "):
		msg := strings.TrimSpace(line[len("fatal error: "):])
		if strings.HasPrefix(msg, "all goroutines are asleep") {
			return "go:all goroutines are asleep", msg, true
		}
		return "go:fatal error: " + normMessage(msg), msg, true
	}
	return "", "", false
}

// ---- Node.js ----

var (
	// nodeErrorLine is the first line of an uncaught error as Node prints
	// it: "TypeError: x", "Error [ERR_X]: y", "Error: write EPIPE".
	nodeErrorLine = regexp.MustCompile(`^([A-Za-z_$][\w$]*(?:Error|Exception)|Error)(?: \[([A-Z0-9_]+)\])?(?::\s?(.*))?$`)
	caretLine     = regexp.MustCompile(`^\s*\^+\s*$`)
	errnoCode     = regexp.MustCompile(`\b(E[A-Z0-9]{2,})\s*$`)
	ansi          = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
)

// nodeSignature recognises Node's report of an uncaught error. Node prints
// where it was thrown, the source line, a caret and a blank line before the
// error, and that context says which kind of crash it is: the source line
// "throw er; // Unhandled 'error' event" for an 'error' event nobody listens
// to (an EPIPE on stdout, typically), node:internal/process/promises for an
// unhandled rejection, anything else for an uncaught exception. Requiring
// the caret keeps an error that a program merely logs from counting.
func (s *stderrScanner) nodeSignature(line string) (sig, errLine, site string, ctx []recentLine, ok bool) {
	if strings.HasPrefix(line, "[UnhandledPromiseRejection:") || strings.Contains(line, "UnhandledPromiseRejectionWarning:") {
		return "node:unhandled-rejection", line, "", s.context(), true
	}
	if strings.HasPrefix(line, "Emitted 'error' event on ") {
		if s.lastNodeHit > 0 && s.line-s.lastNodeHit <= maxStderrLines {
			return "", "", "", nil, false // the same crash, already named by its throw site
		}
		// An 'error' event whose throw site was not printed (or was cut):
		// its error line came a few lines before.
		if s.nodeErr != "" && s.line-s.nodeErrLine <= 30 {
			return "node:unhandled-error" + codeSuffix(nodeErrorLine.FindStringSubmatch(s.nodeErr)), s.nodeErr, "", nil, true
		}
		return "node:unhandled-error", line, "", nil, true
	}
	m := nodeErrorLine.FindStringSubmatch(line)
	if m == nil {
		return "", "", "", nil, false
	}
	s.nodeErr, s.nodeErrLine = line, s.line
	i := 1
	if b, ok := s.back(1); ok && strings.TrimSpace(b.text) == "" {
		i = 2
	}
	caret, ok := s.back(i)
	if !ok || !caretLine.MatchString(caret.text) {
		return "", "", "", nil, false
	}
	src, _ := s.back(i + 1)
	loc, _ := s.back(i + 2)
	switch {
	case strings.Contains(src.text, "Unhandled 'error' event") || m[2] == "ERR_UNHANDLED_ERROR":
		return "node:unhandled-error" + codeSuffix(m), line, "", s.context(), true
	case strings.Contains(src.text, "fromPromise") || strings.Contains(loc.text, "process/promises") || m[2] == "ERR_UNHANDLED_REJECTION":
		return "node:unhandled-rejection", line, "", s.context(), true
	}
	return "node:" + m[1], line, strings.TrimSpace(loc.text), s.context(), true
}

// codeSuffix names the errno of an unhandled 'error' event: the bracketed
// code, or the last word of "write EPIPE".
func codeSuffix(m []string) string {
	if m == nil {
		return ""
	}
	if m[2] != "" && m[2] != "ERR_UNHANDLED_ERROR" {
		return " " + m[2]
	}
	if c := errnoCode.FindStringSubmatch(m[3]); c != nil {
		return " " + c[1]
	}
	return ""
}

// context is the look-back that belongs in a Node.js crash excerpt.
func (s *stderrScanner) context() []recentLine {
	var out []recentLine
	for i := s.nrec; i >= 1; i-- {
		r, _ := s.back(i)
		out = append(out, r)
	}
	return out
}

// ---- Python ----

// pyRecord is one exception line of a traceback.
type pyRecord struct {
	class, msg string
	depth      int
	group      bool
	// superseded is set when a later exception in the same chain replaced
	// this one ("During handling of the above exception, ..."): the crash is
	// what propagated, not its context.
	superseded bool
	// sealedAt protects a sub-exception from a chain marker of a later
	// sibling in the same exception group: only a marker shallower than
	// sealedAt reaches it. 0 is unsealed.
	sealedAt int
	seq, t   int64
}

// pyBlock is a traceback being read: from "Traceback (most recent call
// last):" (or "Exception ignored in:") to the line after its last exception
// line that does not continue it.
type pyBlock struct {
	active  bool
	ended   bool // the top-level exception line has been seen
	records []pyRecord
	x       *excerpt
	// caughtBy is the SDK's log line the traceback follows, if any.
	caughtBy string
	// sessionCrash is the SDK's word that the traceback ended a session.
	sessionCrash string
}

const maxPyRecords = 256

func (b *pyBlock) begin(seq, t int64, line string) bool {
	_, content, sep, _ := splitPy(line)
	if sep || !(isPyHeader(content) || strings.HasPrefix(content, "Exception ignored")) {
		return false
	}
	*b = pyBlock{active: true, x: newExcerpt(seq, t)}
	b.x.add(line)
	return true
}

// take adds line to the block if it continues it.
func (b *pyBlock) take(seq, t int64, line string) bool {
	depth, content, sep, sepCol := splitPy(line)
	switch {
	case sep:
		if strings.ContainsAny(content, "0123456789") {
			b.seal(sepCol)
		}
	case isPyHeader(content):
		// After an exception line with no chain marker since, a header
		// starts a new traceback: one at depth 0, or an outermost
		// exception group's, the only header Python draws with a "+"
		// margin. A group printed on the line after a logged traceback is
		// its own, and the SDK's word before that traceback is not its.
		if b.ended && (depth == 0 || strings.HasPrefix(strings.TrimLeft(line, " "), "+")) {
			return false // a new traceback, not a link of this one's chain
		}
	case isChainMarker(content):
		b.supersede(depth)
		b.ended = false
	case strings.TrimSpace(content) == "":
	case content[0] == ' ' || content[0] == '\t':
		// a frame, a source line, carets, or an indented message line
	case isPyException(content):
		if depth == 0 && b.ended {
			return false // a second exception line with no chain: not ours
		}
		b.record(depth, content, seq, t)
		if depth == 0 {
			b.ended = true
		}
	case depth > 0:
		// inside an exception group's box: "| and 3 more exceptions"
	default:
		// "Exception ignored in: ..." starts a traceback of its own.
		return false
	}
	b.x.add(line)
	return true
}

func (b *pyBlock) record(depth int, content string, seq, t int64) {
	if len(b.records) >= maxPyRecords {
		return
	}
	class, msg, _ := strings.Cut(content, ":")
	// Copies: the line may share memory with a long stderr line, which a
	// record must not keep alive.
	class, msg = strings.Clone(class), strings.Clone(strings.TrimSpace(msg))
	group := strings.HasSuffix(class, "ExceptionGroup") || subExceptions.MatchString(msg)
	b.records = append(b.records, pyRecord{class: class, msg: msg, depth: depth, group: group, seq: seq, t: t})
}

func (b *pyBlock) supersede(depth int) {
	for i := range b.records {
		r := &b.records[i]
		if r.depth >= depth && (r.sealedAt == 0 || depth < r.sealedAt) {
			r.superseded = true
		}
	}
}

func (b *pyBlock) seal(col int) {
	for i := range b.records {
		r := &b.records[i]
		if r.depth >= col && (r.sealedAt == 0 || col < r.sealedAt) {
			r.sealedAt = col
		}
	}
}

// finish names the block's crashes: each distinct exception that
// propagated and is not a group (a group says only that its members
// failed). A traceback cut off before any exception line names nothing.
func (b *pyBlock) finish() []crashHit {
	b.active = false
	var hits []crashHit
	seen := map[string]bool{}
	add := func(r pyRecord) {
		sig := pySignature(r.class, r.msg)
		if seen[sig] {
			return
		}
		seen[sig] = true
		text := r.class
		if r.msg != "" {
			text += ": " + r.msg
		}
		hits = append(hits, crashHit{sig: sig, text: text, seq: r.seq, t: r.t, excerpt: b.x, caughtBy: b.caughtBy, sessionCrash: b.sessionCrash})
	}
	for _, r := range b.records {
		if !r.group && !r.superseded {
			add(r)
		}
	}
	if len(hits) == 0 {
		// Only groups (their members were cut off): name the outermost.
		for _, r := range b.records {
			if !r.superseded {
				add(r)
				break
			}
		}
	}
	return hits
}

// caughtLine matches the messages the Python SDK logs, with
// logger.exception, when it catches the exception a request or notification
// handler raised and answers with an error instead (mcp 2.x:
// "handler for 'tools/call' raised", "modern request handler raised",
// "Tool 'fetch' raised an unexpected exception"). Logging prefixes in
// front of the message do not matter. Logged, by the SDK's own word, is
// handled: the peer's exit, not the traceback, then says whether it
// crashed.
var caughtLine = regexp.MustCompile(`(?:^|[\s:\]])(?:(?:modern )?request handler raised|(?:notification )?handler for ['"][^'"]*['"] raised|(?:Tool|Resource|Prompt) ['"].*['"] raised an unexpected exception|Completion for argument ['"][^'"]*['"] raised an unexpected exception)`)

// sdkCaught returns line, trimmed, when it is an SDK's word that it caught
// the exception whose traceback follows; "" otherwise.
func sdkCaught(line string) string {
	if !caughtLine.MatchString(line) {
		return ""
	}
	return strings.Clone(strings.TrimSpace(line))
}

// sessionCrashedLine matches what the Python SDK's StreamableHTTPSessionManager
// logs, with the traceback, when the server task of a session ends with an
// exception: "Session <id> crashed: <exception>" (mcp 1.x up to 1.26,
// logger.error with exc_info), "Session <id> crashed" (mcp 1.27 and 2.x,
// logger.exception), "Stateless session crashed" (stateless mode). It
// catches the exception only so that the process serves its other sessions
// on; the session's handlers died with it, unanswered. Its other
// logger.exception lines ("Error in message router", "Error in SSE writer",
// "SSE response error") are about one stream, which the SDK closes and goes
// on: those stay handled.
var sessionCrashedLine = regexp.MustCompile(`(?:^|[\s:\]])(?:Session \S+|Stateless session) crashed(?::|\s|$)`)

// sdkSessionCrashed returns line, trimmed, when it is an SDK's word that the
// exception whose traceback follows ended a session; "" otherwise.
func sdkSessionCrashed(line string) string {
	if !strings.Contains(line, "crashed") || !sessionCrashedLine.MatchString(line) {
		return ""
	}
	return strings.Clone(strings.TrimSpace(line))
}

var (
	subExceptions = regexp.MustCompile(`\(\d+ sub-exceptions?\)$`)
	// pyExceptionLine is "module.Class: message" or "Class" alone.
	pyExceptionLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(:( .*)?)?$`)
)

func isPyHeader(content string) bool {
	return content == "Traceback (most recent call last):" || content == "Exception Group Traceback (most recent call last):"
}

func isChainMarker(content string) bool {
	return strings.HasPrefix(content, "During handling of the above exception, another exception occurred") ||
		strings.HasPrefix(content, "The above exception was the direct cause of the following exception")
}

// isPyException tells an exception line from other unindented text. Class
// names are CamelCase with a lower-case letter, which keeps log levels
// ("WARNING: ...") out.
func isPyException(content string) bool {
	if !pyExceptionLine.MatchString(content) {
		return false
	}
	class, _, _ := strings.Cut(content, ":")
	last := class[strings.LastIndexByte(class, '.')+1:]
	return last[0] >= 'A' && last[0] <= 'Z' && strings.ContainsAny(last, "abcdefghijklmnopqrstuvwxyz")
}

// splitPy takes apart the box Python draws around exception groups:
// "  | text" is text at depth 2, "  +-+---- 1 ----" is a separator whose
// sub-exceptions sit at column 4. Lines outside a box are depth 0.
func splitPy(line string) (depth int, content string, sep bool, sepCol int) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i == len(line) {
		return 0, line, false, 0
	}
	switch line[i] {
	case '|':
		return i, strings.TrimPrefix(line[i+1:], " "), false, 0
	case '+':
		rest := line[i:]
		if strings.HasPrefix(rest, "+ ") {
			return i, rest[2:], false, 0
		}
		if strings.Trim(rest, "+- .0123456789") == "" && strings.Contains(rest, "--") {
			return i, rest, true, i + strings.LastIndexByte(rest[:strings.Index(rest, "--")+1], '+')
		}
	}
	return 0, line, false, 0
}

// genericClasses are builtin exceptions whose name says little: their
// signature carries the message, so that two different RuntimeErrors are two
// different crashes.
var genericClasses = map[string]bool{
	"Exception": true, "BaseException": true, "RuntimeError": true, "ValueError": true,
	"TypeError": true, "KeyError": true, "IndexError": true, "LookupError": true,
	"AssertionError": true, "AttributeError": true, "OSError": true, "IOError": true,
	"EnvironmentError": true, "NameError": true, "SystemError": true, "NotImplementedError": true,
}

// pySignature is python:<Class>, without the module, plus :<message> for a
// generic builtin.
func pySignature(class, msg string) string {
	name := class[strings.LastIndexByte(class, '.')+1:]
	if genericClasses[name] && msg != "" {
		return "python:" + name + ":" + normMessage(msg)
	}
	return "python:" + name
}

var hexAddr = regexp.MustCompile(`0x[0-9a-fA-F]{6,}`)

// normMessage keeps a signature stable from run to run: memory addresses
// vary, and a message is cut where it stops naming the bug.
func normMessage(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if strings.Contains(msg, "0x") {
		msg = hexAddr.ReplaceAllString(msg, "0x…")
	}
	if len(msg) > 120 {
		msg = words.Cut(msg, 120)
		if i := strings.Index(msg, "…["); i >= 0 {
			msg = msg[:i] + "…"
		}
	}
	return msg
}
