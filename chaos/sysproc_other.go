//go:build unix && !linux

package chaos

import "syscall"

// sysProcAttr puts the child in its own process group, so the shutdown ladder
// reaches its children too.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
