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
	port, err := pickPort(o.URL.Hostname())
	if err != nil {
		return o, &SetupError{Reason: "no free port for the server", Err: err}
	}
	p := strconv.Itoa(port)
	u := *o.URL
	u.Host = net.JoinHostPort(u.Hostname(), p)
	o.URL = &u
	cmd := make([]string, len(o.Command))
	for i, a := range o.Command {
		cmd[i] = strings.ReplaceAll(a, PortPlaceholder, p)
	}
	o.commandTemplate, o.Command = o.Command, cmd
	o.runEnv = append(os.Environ(), "PORT="+p)
	return o, nil
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
