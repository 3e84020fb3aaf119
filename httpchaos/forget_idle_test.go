package httpchaos

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// A forgery the client stopped using is let go when another is made; one
// in use is kept (issue 31: a proxy running for days with forget-session
// firing now and then).
func TestForgeriesIdleLongerThanForgetIdleAreLetGo(t *testing.T) {
	p, err := New(Config{Upstream: &url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close("the test ended")
	defer func(d time.Duration) { forgetIdle = d }(forgetIdle)
	forgetIdle = 50 * time.Millisecond
	p.forget("idle", "forged-idle", "forget-session#1")
	p.forget("used", "forged-used", "forget-session#1")
	for range 4 {
		time.Sleep(20 * time.Millisecond)
		x := &exchange{p: p}
		x.sendForged(http.Header{"Mcp-Session-Id": {"used"}})
	}
	p.forget("new", "forged-new", "forget-session#1")
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.forgotten["idle"]; ok {
		t.Error("a forgery idle for 80 ms, past forgetIdle 50 ms, is still kept")
	}
	if _, ok := p.forgedFrom["forged-idle"]; ok {
		t.Error("the forged id of a forgery let go still maps back")
	}
	for _, s := range []string{"used", "new"} {
		if _, ok := p.forgotten[s]; !ok {
			t.Errorf("forgery %q, used within forgetIdle, was let go", s)
		}
	}
}
