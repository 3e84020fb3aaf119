//go:build linux

package portowner

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestListenerNamesThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	p, ok := Listener(port)
	if !ok || p.PID != os.Getpid() {
		t.Fatalf("Listener(%d) = %v, %v; want this process, %d", port, p, ok, os.Getpid())
	}
	if !strings.Contains(p.Command, "portowner.test") {
		t.Errorf("command = %q, want the test binary's", p.Command)
	}
	if got, want := Addresses(port), []string{ln.Addr().String()}; !slices.Equal(got, want) {
		t.Errorf("Addresses(%d) = %q, want %q", port, got, want)
	}
	all, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	allPort := all.Addr().(*net.TCPAddr).Port
	if got, want := Addresses(allPort), []string{"0.0.0.0:" + strconv.Itoa(allPort)}; !slices.Equal(got, want) {
		t.Errorf("Addresses(%d) = %q, want %q", allPort, got, want)
	}
	ln.Close()
	if p, ok := Listener(port); ok {
		t.Errorf("Listener(%d) after close = %v, want none", port, p)
	}
}

func TestDescends(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !Descends(cmd.Process.Pid, os.Getpid()) {
		t.Error("a child does not descend from its parent")
	}
	if !Descends(os.Getpid(), os.Getpid()) {
		t.Error("a process does not count as its own tree")
	}
	if Descends(os.Getpid(), cmd.Process.Pid) {
		t.Error("a parent descends from its child")
	}
	if !StartedBefore(1, cmd.Process.Pid) || StartedBefore(cmd.Process.Pid, 1) {
		t.Error("init did not start before a child of this test")
	}
}
