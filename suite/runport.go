package suite

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// PortPlaceholder, in an HTTP server's URL and in its command's arguments,
// stands for a free loopback port mcpchaos picks for each run, so that
// every run starts its own server and the matrix runs side by side. The
// same port is in the server's environment as PORT.
const PortPlaceholder = "{port}"

// HasPort reports whether s holds PortPlaceholder.
func HasPort(s string) bool { return strings.Contains(s, PortPlaceholder) }

// ParseURLTemplate parses an HTTP server's URL in which the port may be
// PortPlaceholder. The URL returned has port 0 in its place, and perRun
// says it had one: each run then picks its own (see Options.PortPerRun).
func ParseURLTemplate(s string) (u *url.URL, perRun bool, err error) {
	if !HasPort(s) {
		u, err = url.Parse(s)
		return u, false, err
	}
	if strings.Count(s, PortPlaceholder) > 1 {
		return nil, false, fmt.Errorf("%q: write %s once, as the URL's port, as in http://127.0.0.1:%s/mcp", s, PortPlaceholder, PortPlaceholder)
	}
	u, err = url.Parse(strings.Replace(s, PortPlaceholder, "0", 1))
	if err != nil {
		return nil, false, err
	}
	if u.Port() != "0" {
		return nil, false, fmt.Errorf("%q: %s stands for the port, after the host and a colon, as in http://127.0.0.1:%s/mcp", s, PortPlaceholder, PortPlaceholder)
	}
	return u, true, nil
}

// URLTemplate writes u, whose port 0 stands for PortPlaceholder, as the
// user wrote it: redacted, with the placeholder.
func URLTemplate(u *url.URL) string {
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return strings.Replace(u.Redacted(), u.Host, host+":"+PortPlaceholder, 1)
}

// urlTemplate is the URL as the user wrote it, for the session events of
// a run on a port of its own; "" otherwise.
func (o Options) urlTemplate() string {
	if o.PortPerRun {
		return URLTemplate(o.URL)
	}
	return ""
}

// urlTemplate is Options.urlTemplate of test-client's server.
func (o ClientOptions) urlTemplate() string {
	if o.PortPerRun {
		return URLTemplate(o.ServerURL)
	}
	return ""
}

// shownURL is how the report names the target's URL.
func (o Options) shownURL() string {
	if o.PortPerRun {
		return URLTemplate(o.URL)
	}
	return o.URL.Redacted()
}

// caseTarget is the server command and URL a regression case records: as
// the user wrote them, PortPlaceholder and all, so that its replay picks
// a port of its own.
func (o Options) caseTarget() ([]string, string) {
	if o.PortPerRun && o.URL != nil {
		return o.commandTemplate, URLTemplate(o.URL)
	}
	return o.Command, caseURL(o.URL)
}

// serverCommand is the command that starts an HTTP server under test and
// the environment it gets (nil: mcpchaos's own).
type serverCommand struct {
	argv, env []string
}

func (o Options) server() serverCommand { return serverCommand{argv: o.Command, env: o.runEnv} }

// onFreshPort is o for one run of a PortPerRun target: a free port on the
// URL's host put in the URL, in place of PortPlaceholder in the command,
// and in the server's environment as PORT.
func (o Options) onFreshPort() (Options, error) {
	if !o.PortPerRun {
		return o, nil
	}
	u, cmd, env, err := onPort(o.URL, o.Command)
	if err != nil {
		return o, err
	}
	o.URL, o.commandTemplate, o.Command, o.runEnv = u, o.Command, cmd, env
	return o, nil
}

// onFreshPort is Options.onFreshPort of test-client's server.
func (o ClientOptions) onFreshPort() (ClientOptions, error) {
	if !o.PortPerRun {
		return o, nil
	}
	u, cmd, env, err := onPort(o.ServerURL, o.Server)
	if err != nil {
		return o, err
	}
	o.ServerURL, o.serverTemplate, o.Server, o.serverEnv = u, o.Server, cmd, env
	return o, nil
}

// onPort picks a free port on u's host and returns u with it, command with
// it in place of PortPlaceholder, and the environment that names it PORT.
func onPort(u *url.URL, command []string) (*url.URL, []string, []string, error) {
	port, err := pickPort(u.Hostname())
	if err != nil {
		return nil, nil, nil, &SetupError{Reason: "no free port for the server", Err: err}
	}
	p := strconv.Itoa(port)
	at := *u
	at.Host = net.JoinHostPort(u.Hostname(), p)
	cmd := make([]string, len(command))
	for i, a := range command {
		cmd[i] = strings.ReplaceAll(a, PortPlaceholder, p)
	}
	return &at, cmd, append(os.Environ(), "PORT="+p), nil
}

// server is the command that starts test-client's HTTP server.
func (o ClientOptions) server() serverCommand { return serverCommand{argv: o.Server, env: o.serverEnv} }

// caseTarget is Options.caseTarget of test-client's server.
func (o ClientOptions) caseTarget() ([]string, string) {
	if o.PortPerRun && o.ServerURL != nil {
		return o.serverTemplate, URLTemplate(o.ServerURL)
	}
	return o.Server, caseURL(o.ServerURL)
}

// retryPort runs run on a fresh port until its server finds the port its
// own (portTaken), at most portTries times.
func retryPort[O any](o O, fresh func(O) (O, error), perRun bool, run func(O) (*scenarioRun, error)) (*scenarioRun, error) {
	for try := 1; ; try++ {
		at, err := fresh(o)
		if err != nil {
			return nil, err
		}
		r, err := run(at)
		if perRun && portTaken(err) && try < portTries {
			continue // another process took the port picked: not the server's doing
		}
		return r, err
	}
}

// pickPort picks each run's port; tests make it pick a taken one.
var pickPort = freePort

// freePort is a port nothing listens on at host, as the system picks one:
// free when asked, and unlikely to be taken again at once (the system
// hands out its ephemeral ports in turn). A run whose server finds it
// taken all the same is made again on another (portTaken).
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("listening on %s to find a free port: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portTaken says a run's server found its picked port held by another
// process: the run is made again on another port, never judged.
func portTaken(err error) bool {
	var se *SetupError
	return errors.As(err, &se) && se.portTaken
}

// portTries bounds the runs made again because their port was taken.
const portTries = 3
