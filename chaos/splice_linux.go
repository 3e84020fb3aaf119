package chaos

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// spliceChunk is the most one splice call moves: a pipe's worth, raised
// for the pipe between the two splices (see newSplicePipe).
const spliceChunk = 1 << 20

// spliceCopy moves bytes from src to dst until src ends, through a pipe of
// the kernel's own, so that they are never copied into our memory: the
// relay of a session that reads no frame (see passThrough) is then no more
// work than the pipes themselves. Bytes go on as soon as they come, as with
// read and write. When src ends, done is true and err is the read error
// (io.EOF at the end of src).
//
// done is false when the kernel cannot splice between these two (a
// terminal, a file opened to append), or writing to dst failed: every byte
// read from src has then been written to dst or failed to be, and the
// caller goes on the ordinary way, which meets the failure again and deals
// with it.
func spliceCopy(dst, src *os.File) (done bool, err error) {
	in, err := src.SyscallConn()
	if err != nil {
		return false, nil
	}
	out, err := dst.SyscallConn()
	if err != nil {
		return false, nil
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return false, nil
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	// A larger middle pipe means fewer calls for a fast stream; the kernel
	// may refuse (pipe-max-size), which only costs calls.
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, uintptr(p[1]), fSetPipeSz, spliceChunk)

	first := true
	for {
		// Fill the middle pipe from src: splice waits for src to be
		// readable, or fails with EAGAIN on a non-blocking src, which the
		// poller then waits for. The middle pipe is empty, so EAGAIN
		// cannot be its doing.
		var n int64
		var serr error
		rerr := in.Read(func(fd uintptr) bool {
			n, serr = syscall.Splice(int(fd), nil, p[1], nil, spliceChunk, spliceFlags)
			return !errors.Is(serr, syscall.EAGAIN)
		})
		if first && (errors.Is(serr, syscall.EINVAL) || errors.Is(serr, syscall.ENOSYS)) {
			return false, nil // nothing moved yet
		}
		first = false
		if serr == nil {
			serr = rerr
		}
		if serr != nil {
			return true, serr
		}
		if n == 0 {
			return true, io.EOF
		}
		// Empty it into dst.
		for n > 0 {
			var m int64
			var werr error
			err := out.Write(func(fd uintptr) bool {
				m, werr = syscall.Splice(p[0], nil, int(fd), nil, int(n), spliceFlags)
				return !errors.Is(werr, syscall.EAGAIN)
			})
			if werr == nil {
				werr = err
			}
			if werr != nil {
				// dst takes no splice (EINVAL: opened to append) or
				// failed: what is in the middle pipe goes the ordinary
				// way, and so does the rest.
				drain(dst, p[0], n)
				return false, nil
			}
			n -= m
		}
	}
}

// drain writes the n bytes waiting in the pipe r to dst with read and write.
func drain(dst *os.File, r int, n int64) {
	buf := make([]byte, min(n, 64<<10))
	for n > 0 {
		k, err := syscall.Read(r, buf[:min(n, int64(len(buf)))])
		if k <= 0 || err != nil {
			return
		}
		if _, err := dst.Write(buf[:k]); err != nil {
			return
		}
		n -= int64(k)
	}
}

// spliceFlags: move pages rather than copy them where the kernel can, and
// never block inside the call on the middle pipe (the poller waits instead).
const spliceFlags = 0x1 | 0x2 // SPLICE_F_MOVE | SPLICE_F_NONBLOCK
