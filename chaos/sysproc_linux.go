package chaos

import "syscall"

// sysProcAttr puts the child in its own process group, so the shutdown ladder
// reaches its children too, and has the kernel kill it if mcpchaos dies, so
// no child outlives us even on SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
