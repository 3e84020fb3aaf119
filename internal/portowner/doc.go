// Package portowner tells which process listens on a TCP port, where the
// operating system says (Linux, through /proc), so that mcpchaos never
// tests one server while believing it tests another: a port already taken
// before it starts the user's server, or taken by something else than the
// process it started.
package portowner
