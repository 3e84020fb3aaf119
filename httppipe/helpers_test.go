package httppipe_test

import (
	"bufio"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/httppipe"
)

const testTimeout = 10 * time.Second

func dial(t *testing.T, rawURL string, h http.Header) *httppipe.Pipe {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := httppipe.Dial(httppipe.Config{URL: u, Header: h})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lines reads the reader's lines in the background, so that a test can
// wait for some with a timeout.
type lines struct {
	c    chan string
	done chan struct{} // closed at the reader's end
}

func readLines(r io.Reader) *lines {
	l := &lines{c: make(chan string, 100), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer close(l.c)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l.c <- sc.Text()
		}
	}()
	return l
}

// next waits for n lines.
func (l *lines) next(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	timeout := time.After(testTimeout)
	for len(got) < n {
		select {
		case s, ok := <-l.c:
			if !ok {
				t.Errorf("the reader ended after %d of %d lines: %q", len(got), n, got)
				return got
			}
			got = append(got, s)
		case <-timeout:
			t.Errorf("%d of %d lines came within %v: %q", len(got), n, testTimeout, got)
			return got
		}
	}
	return got
}

// rest waits for the reader's end and returns the lines before it.
func (l *lines) rest(t *testing.T) []string {
	t.Helper()
	var got []string
	timeout := time.After(testTimeout)
	for {
		select {
		case s, ok := <-l.c:
			if !ok {
				return got
			}
			got = append(got, s)
		case <-timeout:
			t.Errorf("the reader did not end within %v (lines: %q)", testTimeout, got)
			return got
		}
	}
}
