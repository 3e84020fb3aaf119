package chaos

import (
	"os"
	"syscall"
)

// The fcntl commands that set and get a pipe's size.
const fSetPipeSz, fGetPipeSz = 1031, 1032

// shrinkPipe makes the pipe under f as small as Linux allows (one page), so a
// writer blocks after a few KiB instead of 64 KiB. It returns the new size.
func shrinkPipe(f *os.File) (int, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var size uintptr
	var errno syscall.Errno
	if cerr := raw.Control(func(fd uintptr) {
		size, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 4096)
		if errno == 0 {
			size, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
		}
	}); cerr != nil {
		return 0, cerr
	}
	if errno != 0 {
		return 0, errno
	}
	return int(size), nil
}
