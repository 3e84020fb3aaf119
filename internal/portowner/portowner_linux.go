package portowner

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Listener returns the process that listens on TCP port port, and false
// when none can be told: nothing listens, or the socket belongs to a
// process whose descriptors this one may not read.
func Listener(port int) (Process, bool) {
	inodes := map[string]bool{}
	for _, l := range listeners(port) {
		inodes[l.inode] = true
	}
	if len(inodes) == 0 {
		return Process{}, false
	}
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				pid, _ := strconv.Atoi(filepath.Base(dir))
				return Process{PID: pid, Command: commandLine(pid)}, true
			}
		}
	}
	return Process{}, false
}

// Addresses are the local addresses of the TCP listeners on port, as
// host:port ("0.0.0.0:8000", "[::]:8000", "127.0.0.1:8000").
func Addresses(port int) []string {
	var out []string
	for _, l := range listeners(port) {
		out = append(out, net.JoinHostPort(l.ip.String(), strconv.Itoa(port)))
	}
	return out
}

// socket is a TCP listener of /proc/net/tcp{,6}.
type socket struct {
	ip    net.IP
	inode string
}

// listeners are the TCP listeners on port, IPv4 and IPv6.
func listeners(port int) []socket {
	var out []socket
	want := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			const listen = "0A"
			if len(fields) > 9 && strings.HasSuffix(fields[1], want) && fields[3] == listen {
				if ip := procIP(strings.TrimSuffix(fields[1], want)); ip != nil {
					out = append(out, socket{ip: ip, inode: fields[9]})
				}
			}
		}
	}
	return out
}

// procIP reads an address of /proc/net/tcp{,6}: the address's 32-bit
// words in hex, each in the machine's byte order (little-endian here).
func procIP(h string) net.IP {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 4 && len(b) != 16 {
		return nil
	}
	ip := make(net.IP, len(b))
	for i := 0; i < len(b); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return ip
}

func commandLine(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
}

// stat is the fields of /proc/PID/stat after the command, from its state
// on (index 0 is the state, 1 the parent, 19 the start time).
func stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// StartedBefore reports whether process pid started before process other,
// and false when that cannot be told.
func StartedBefore(pid, other int) bool {
	a, b := stat(pid), stat(other)
	if len(a) < 20 || len(b) < 20 {
		return false
	}
	ta, erra := strconv.ParseUint(a[19], 10, 64)
	tb, errb := strconv.ParseUint(b[19], 10, 64)
	return erra == nil && errb == nil && ta < tb
}

// Descends reports whether pid is root or one of its descendants, and
// false when that cannot be told.
func Descends(pid, root int) bool {
	for range 64 { // deeper than any real process tree
		if pid == root {
			return true
		}
		if pid <= 1 {
			return false
		}
		fields := stat(pid)
		if len(fields) < 2 {
			return false
		}
		pid, _ = strconv.Atoi(fields[1])
	}
	return false
}

// Supported says whether this system tells who listens on a port.
const Supported = true
