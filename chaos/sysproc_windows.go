package chaos

import "syscall"

// sysProcAttr puts the child in a console process group of its own, so a
// Ctrl-C meant for mcpchaos does not reach it: mcpchaos stops it. Windows
// has no process group to signal, nor a parent-death signal (see
// process_windows.go).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
