package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// soakFaults is the soak's plan: every fault acts now and then, so that the
// proxy's state for delayed, reset, refused and forgotten exchanges is made
// and must be released as often as that of plain ones. The rates keep most
// sessions whole, since a session a fault forgot ends there.
var soakFaults = []string{
	"delay:on=s2c:response:tools/call,p=0.02,times=0,for=300ms,jitter=200ms",
	"hold-headers:on=c2s:request:tools/call,p=0.002,times=0,for=1s",
	"reset:on=c2s:request:tools/call,p=0.001,times=0",
	"http-error:on=c2s:request:tools/call,p=0.001,times=0,status=503",
	"forget-session:on=c2s:request:tools/call,p=0.0005,times=0",
}

type options struct {
	bin                     string
	sessions, calls, rounds int
	duration, interval      time.Duration
	report                  bool
	abandon                 float64
	dir                     string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the mcpchaos binary to run (required)")
	flag.IntVar(&o.sessions, "sessions", 1000, "sessions going at once")
	flag.IntVar(&o.calls, "calls", 20, "tool calls per session")
	flag.IntVar(&o.rounds, "rounds", 0, "run this many rounds of -sessions sessions without faults and print the proxy's RSS after each, instead of the soak")
	flag.BoolVar(&o.report, "report", true, "run the proxy with --report")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the soak runs")
	flag.DurationVar(&o.interval, "interval", 5*time.Second, "how often the proxy is sampled")
	flag.Float64Var(&o.abandon, "abandon", 0.1, "share of sessions left without a DELETE")
	flag.StringVar(&o.dir, "dir", "", "where the report and the processes' output go (default: a temporary directory)")
	flag.Parse()
	if o.bin == "" {
		fmt.Fprintln(os.Stderr, "soak: no -bin; build mcpchaos first (go build -o /tmp/mcpchaos ./cmd/mcpchaos) and pass -bin /tmp/mcpchaos")
		os.Exit(2)
	}
	if o.dir == "" {
		d, err := os.MkdirTemp("", "soak")
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(2)
		}
		o.dir = d
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	var err error
	if o.rounds > 0 {
		err = runRounds(o)
	} else {
		err = runSoak(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// freeAddr returns a loopback address nothing listens on just now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// proc is a process the soak started; its output goes to a file in dir.
type proc struct {
	cmd  *exec.Cmd
	done chan error
}

func start(dir, name, bin string, args ...string) (*proc, error) {
	out, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); out.Close() }()
	return p, nil
}

// stop signals p and waits up to wait for it to exit, then kills it.
func (p *proc) stop(sig syscall.Signal, wait time.Duration) error {
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		return err
	case <-time.After(wait):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not exit within %s of %s: killed", p.cmd.Path, wait, sig)
	}
}

// waitListening polls addr until it accepts a connection, for up to 10 s.
func waitListening(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after 10 s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setup is the upstream and the proxy in front of it.
type setup struct {
	o                  options
	upAddr, proxyAddr  string
	upstream, proxy    *proc
	report             string
	mu                 sync.Mutex
	upDownAt, upBackAt time.Time // the restart, once it happened
}

func startSetup(o options, faults []string) (*setup, error) {
	s := &setup{o: o, report: filepath.Join(o.dir, "report.json")}
	var err error
	if s.upAddr, err = freeAddr(); err != nil {
		return nil, err
	}
	if s.proxyAddr, err = freeAddr(); err != nil {
		return nil, err
	}
	if err := s.startUpstream(); err != nil {
		return nil, err
	}
	args := []string{"proxy", "--upstream", "http://" + s.upAddr + "/mcp", "--listen", s.proxyAddr, "--seed", "1", "-q"}
	if o.report {
		args = append(args, "--report", s.report)
	}
	for _, f := range faults {
		args = append(args, "--fault", f)
	}
	if s.proxy, err = start(o.dir, "proxy", o.bin, args...); err != nil {
		s.upstream.stop(syscall.SIGKILL, 5*time.Second)
		return nil, err
	}
	if err := waitListening(s.proxyAddr); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *setup) startUpstream() error {
	p, err := start(s.o.dir, "upstream", s.o.bin, "serve", "--http", s.upAddr)
	if err != nil {
		return err
	}
	s.upstream = p
	return waitListening(s.upAddr)
}

func (s *setup) close() {
	if s.proxy != nil {
		s.proxy.stop(syscall.SIGKILL, 5*time.Second)
	}
	s.upstream.stop(syscall.SIGKILL, 5*time.Second)
}

// restart kills the upstream (SIGKILL, as a crash) and starts it again on
// the same address after a pause.
func (s *setup) restart(pause time.Duration) error {
	s.mu.Lock()
	s.upDownAt = time.Now()
	s.mu.Unlock()
	s.upstream.stop(syscall.SIGKILL, 5*time.Second)
	time.Sleep(pause)
	if err := s.startUpstream(); err != nil {
		return err
	}
	s.mu.Lock()
	s.upBackAt = time.Now()
	s.mu.Unlock()
	return nil
}

// restartWindow is when the upstream was down, or zero times before.
func (s *setup) restartWindow() (down, back time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upDownAt, s.upBackAt
}

// sample is one reading of the proxy's /proc entries.
type sample struct {
	at             time.Duration
	rssKB, threads int
	fds            int
}

func readProc(pid int) (sample, error) {
	var s sample
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("cannot read the proxy's /proc status (the soak needs Linux): %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			s.rssKB, _ = strconv.Atoi(f[0])
		case "Threads":
			s.threads, _ = strconv.Atoi(f[0])
		}
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, err
	}
	s.fds = len(ents)
	return s, nil
}

// runRounds is the figure issue 31 was opened on: rounds of sessions with
// no fault, the proxy's RSS after each.
func runRounds(o options) error {
	s, err := startSetup(o, nil)
	if err != nil {
		return err
	}
	defer s.close()
	c := newClient("http://"+s.proxyAddr+"/mcp", o.sessions, s)
	for r := 1; r <= o.rounds; r++ {
		began := time.Now()
		var wg sync.WaitGroup
		for range o.sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.session(context.Background(), o.calls, false)
			}()
		}
		wg.Wait()
		// Let the sessions' last exchanges settle before reading.
		time.Sleep(2 * time.Second)
		smp, err := readProc(s.proxy.cmd.Process.Pid)
		if err != nil {
			return err
		}
		fmt.Printf("round %d: %d sessions x %d calls in %s; proxy RSS %.1f MB, threads %d, fds %d\n",
			r, o.sessions, o.calls, time.Since(began).Round(time.Millisecond), float64(smp.rssKB)/1024, smp.threads, smp.fds)
	}
	c.counts.print(os.Stdout)
	if n := c.counts.unexplained.Load(); n > 0 {
		return fmt.Errorf("%d calls failed with no fault to explain them (first: %s)", n, c.counts.firstUnexplained())
	}
	if !o.report {
		return nil
	}
	began := time.Now()
	if err := s.proxy.stop(syscall.SIGTERM, 2*time.Minute); err != nil && !isExit(err) {
		return err
	}
	s.proxy = nil
	fmt.Printf("the proxy judged and wrote its report in %s\n", time.Since(began).Round(time.Millisecond))
	return nil
}

// isExit says err is the proxy's exit status, which is its verdict.
func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

func runSoak(o options) error {
	s, err := startSetup(o, soakFaults)
	if err != nil {
		return err
	}
	defer s.close()
	pid := s.proxy.cmd.Process.Pid
	fmt.Printf("soak: %d sessions x %d calls for %s; proxy pid %d; files in %s\n", o.sessions, o.calls, o.duration, pid, o.dir)
	c := newClient("http://"+s.proxyAddr+"/mcp", o.sessions, s)
	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	began := time.Now()

	var wg sync.WaitGroup
	for w := range o.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				// Every tenth session (o.abandon) is left without a DELETE:
				// the proxy must let it go once it idles.
				abandon := float64((w*7+n)%100) < o.abandon*100
				c.session(ctx, o.calls, abandon)
			}
		}()
	}
	restartErr := make(chan error, 1)
	go func() {
		select {
		case <-time.After(o.duration / 2):
			restartErr <- s.restart(2 * time.Second)
		case <-ctx.Done():
			restartErr <- errors.New("the soak ended before the restart")
		}
	}()

	var samples []sample
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
sampling:
	for {
		select {
		case <-ctx.Done():
			break sampling
		case <-tick.C:
			smp, err := readProc(pid)
			if err != nil {
				return err
			}
			smp.at = time.Since(began)
			samples = append(samples, smp)
			fmt.Printf("%7s rss %6.1f MB  threads %3d  fds %5d  calls %d\n", smp.at.Round(time.Second), float64(smp.rssKB)/1024, smp.threads, smp.fds, c.counts.calls.Load())
		}
	}
	wg.Wait()
	if err := <-restartErr; err != nil {
		return err
	}
	var problems []string
	// The sessions still open when the soak ended were each going to be
	// counted: give the proxy time to judge and write the report.
	if err := s.proxy.stop(syscall.SIGTERM, 2*time.Minute); err != nil && !isExit(err) {
		problems = append(problems, err.Error())
	}
	s.proxy = nil

	fmt.Println()
	c.counts.print(os.Stdout)
	problems = append(problems, flat(samples)...)
	if n := c.counts.unexplained.Load(); n > 0 {
		problems = append(problems, fmt.Sprintf("%d calls failed with neither a fault nor the restart to explain them (first: %s)", n, c.counts.firstUnexplained()))
	}
	if c.counts.afterRestart.Load() == 0 {
		problems = append(problems, "no session opened after the restart was served")
	}
	problems = append(problems, checkReport(s.report)...)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Println("soak: passed")
	return nil
}

// flat checks the criterion of docs/performance.md: after the first tenth
// of the run (warm-up: the sessions are being opened), the mean of the
// last quarter of the samples of RSS, threads and descriptors is at most
// 1.1 times the mean of the first quarter. It prints the peaks.
func flat(samples []sample) []string {
	var peak sample
	for _, s := range samples {
		peak.rssKB, peak.threads, peak.fds = max(peak.rssKB, s.rssKB), max(peak.threads, s.threads), max(peak.fds, s.fds)
	}
	fmt.Printf("peaks: RSS %.1f MB, threads %d, fds %d (%d samples)\n", float64(peak.rssKB)/1024, peak.threads, peak.fds, len(samples))
	after := samples[len(samples)/10:]
	if len(after) < 8 {
		return []string{fmt.Sprintf("only %d samples after warm-up: run longer or sample more often (-interval)", len(after))}
	}
	q := len(after) / 4
	first, last := after[:q], after[len(after)-q:]
	mean := func(ss []sample, f func(sample) int) float64 {
		t := 0
		for _, s := range ss {
			t += f(s)
		}
		return float64(t) / float64(len(ss))
	}
	var problems []string
	for _, m := range []struct {
		name string
		f    func(sample) int
	}{{"RSS (KB)", func(s sample) int { return s.rssKB }}, {"threads", func(s sample) int { return s.threads }}, {"fds", func(s sample) int { return s.fds }}} {
		a, b := mean(first, m.f), mean(last, m.f)
		fmt.Printf("%-9s first quarter %9.1f  last quarter %9.1f  ratio %.3f\n", m.name, a, b, b/a)
		if b > 1.1*a {
			problems = append(problems, fmt.Sprintf("%s grew: last quarter's mean %.0f is %.2fx the first's %.0f", m.name, b, b/a, a))
		}
	}
	return problems
}

// checkReport reads the proxy's report and prints what it says; the
// restart must show in it.
func checkReport(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{"no report: " + err.Error()}
	}
	var rep struct {
		Outcome  string `json:"outcome"`
		Findings []struct {
			Kind, Message string
		} `json:"findings"`
		Scenarios []struct {
			Indeterminate, Notes []string
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return []string{"the report is not JSON: " + err.Error()}
	}
	kinds := map[string]int{}
	for _, f := range rep.Findings {
		kinds[f.Kind]++
	}
	fmt.Printf("report %s (%d bytes): outcome %s, %d findings %v\n", path, len(b), rep.Outcome, len(rep.Findings), kinds)
	said := false
	for _, sc := range rep.Scenarios {
		for _, n := range append(sc.Notes, sc.Indeterminate...) {
			fmt.Println("  note:", n)
		}
	}
	for _, f := range rep.Findings {
		fmt.Printf("  %s: %s\n", f.Kind, firstLine(f.Message))
	}
	all := string(b)
	for _, w := range []string{"could not be reached", "exited", "restart", "crash"} {
		said = said || strings.Contains(all, w)
	}
	if !said {
		return []string{"the report does not mention the upstream going away"}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// counts are the calls' outcomes.
type counts struct {
	calls, answered, faulted, restart, unexplained atomic.Int64
	sessions, afterRestart, initFailed             atomic.Int64
	mu                                             sync.Mutex
	first                                          string
}

func (c *counts) unexplainedOne(why string) {
	if c.unexplained.Add(1) == 1 {
		c.mu.Lock()
		c.first = why
		c.mu.Unlock()
	}
}

func (c *counts) firstUnexplained() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}

func (c *counts) print(w io.Writer) {
	fmt.Fprintf(w, "calls %d: answered %d, failed with a fault %d, failed during the restart %d, unexplained %d\n",
		c.calls.Load(), c.answered.Load(), c.faulted.Load(), c.restart.Load(), c.unexplained.Load())
	fmt.Fprintf(w, "sessions %d (%d opened after the restart and served), %d could not be initialized (all during the restart or a fault)\n",
		c.sessions.Load(), c.afterRestart.Load(), c.initFailed.Load())
}

// client is the load: plain JSON-RPC POSTs, as a client SDK sends them.
type client struct {
	url    string
	hc     *http.Client
	s      *setup
	counts counts
	seq    atomic.Int64
}

func newClient(url string, sessions int, s *setup) *client {
	return &client{url: url, s: s, hc: &http.Client{
		// Longer than any fault holds an answer (hold-headers 1 s, delay
		// 500 ms): a call that times out is a hang, unexplained.
		Timeout:   15 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: sessions, MaxConnsPerHost: 0, IdleConnTimeout: 30 * time.Second},
	}}
}

// outcome is one POST's result.
type outcome struct {
	status  int
	body    []byte
	err     error
	session string
	began   time.Time
}

func (c *client) post(ctx context.Context, session string, msg any) outcome {
	o := outcome{began: time.Now()}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		o.err = err
		return o
	}
	defer resp.Body.Close()
	o.status, o.session = resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The answer is the stream's last data line; notifications come first.
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				o.body = []byte(strings.TrimSpace(d))
				if bytes.Contains(o.body, []byte(`"result"`)) || bytes.Contains(o.body, []byte(`"error"`)) {
					break
				}
			}
		}
		o.err = sc.Err()
		return o
	}
	o.body, o.err = io.ReadAll(resp.Body)
	return o
}

func (c *client) del(session string) {
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if resp, err := c.hc.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// spansRestart says a failure of something begun at began, in a session
// opened at opened, is the restart's doing: it overlapped the upstream's
// absence, or its session was one the restarted server never knew.
func (c *client) spansRestart(opened, began time.Time, o outcome) bool {
	down, back := c.s.restartWindow()
	if down.IsZero() {
		return false
	}
	now := time.Now()
	settled := back
	if settled.IsZero() {
		settled = now
	}
	// A second after the upstream is back, connections the proxy had
	// pooled to the dead one have been found dead.
	if began.Before(settled.Add(time.Second)) && now.After(down) {
		return true
	}
	return o.status == http.StatusNotFound && opened.Before(down)
}

// faultMade says a failure is one the soak's plan makes: a reset
// connection (reset), a status the proxy answered in the server's place
// (http-error), or the server not knowing a session opened since the
// restart (forget-session: nothing else makes it forget one).
func faultMade(o outcome, sessionSinceRestart bool) bool {
	switch {
	case o.err != nil:
		return strings.Contains(o.err.Error(), "connection reset by peer") || errors.Is(o.err, io.EOF) || errors.Is(o.err, io.ErrUnexpectedEOF)
	case o.status != http.StatusOK && bytes.Contains(o.body, []byte("(mcpchaos fault ")):
		return true
	case o.status == http.StatusNotFound && sessionSinceRestart:
		return true
	}
	return false
}

// session runs one session: initialize, the calls, then DELETE unless
// abandoned. A failed call ends it, as the session may be gone.
func (c *client) session(ctx context.Context, calls int, abandon bool) {
	opened := time.Now()
	init := c.post(ctx, "", map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "soak", "version": "1"}}})
	if ctx.Err() != nil {
		return
	}
	c.counts.sessions.Add(1)
	if init.err != nil || init.status != http.StatusOK || init.session == "" {
		c.counts.initFailed.Add(1)
		if !c.spansRestart(opened, init.began, init) && !faultMade(init, true) {
			c.counts.unexplainedOne(fmt.Sprintf("initialize: status %d, err %v, body %.200s", init.status, init.err, init.body))
		}
		return
	}
	sid := init.session
	down, _ := c.s.restartWindow()
	sinceRestart := !down.IsZero() && opened.After(down)
	c.post(ctx, sid, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	served := false
	for i := 1; i <= calls; i++ {
		text := "soak " + strconv.FormatInt(c.seq.Add(1), 10)
		o := c.post(ctx, sid, map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
			"params": map[string]any{"name": "echo", "arguments": map[string]any{"text": text}}})
		if ctx.Err() != nil {
			return // the soak's end, not a failure: not counted
		}
		c.counts.calls.Add(1)
		if o.err == nil && o.status == http.StatusOK && answers(o.body, i, text) {
			c.counts.answered.Add(1)
			served = true
			continue
		}
		switch {
		case c.spansRestart(opened, o.began, o):
			c.counts.restart.Add(1)
		case faultMade(o, sinceRestart || down.IsZero()):
			c.counts.faulted.Add(1)
		default:
			c.counts.unexplainedOne(fmt.Sprintf("call %d: status %d, err %v, body %.200s", i, o.status, o.err, o.body))
		}
		break
	}
	if served && sinceRestart {
		c.counts.afterRestart.Add(1)
	}
	if !abandon {
		c.del(sid)
	}
}

// answers says body is the echo tool's answer to request id with text.
func answers(body []byte, id int, text string) bool {
	var r struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &r) != nil || r.ID != id || len(r.Result.Content) == 0 {
		return false
	}
	return r.Result.Content[0].Text == text
}
