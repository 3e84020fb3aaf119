package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/machine"
)

// Process is a child started in its own process group, with our ends of its
// three pipes. The pipes are os.Pipe files, so they sit in the runtime poller:
// closing one unblocks a pending read or write, which is how every pipe
// operation gets its deadline.
type Process struct {
	cmd    *exec.Cmd
	Stdin  *os.File // our write end of the child's stdin
	Stdout *os.File // our read end of the child's stdout
	Stderr *os.File // our read end of the child's stderr

	done  chan struct{}
	state *os.ProcessState
	// killed is set when SignalGroup killed the child where no signal
	// says so in its exit status (Windows: see process_windows.go).
	killed atomic.Bool

	closeStdin sync.Once
}

// StartError is a command that could not be started: not found, not
// executable, or a pipe the system refused.
type StartError struct {
	Command []string
	Err     error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("cannot start %q: %v", e.Command[0], e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// CheckCommand reports, as a *StartError, why argv[0] cannot be run, before
// anything is started or written.
func CheckCommand(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return &StartError{Command: []string{""}, Err: errors.New("no command given")}
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return &StartError{Command: argv, Err: lookPathReason(err)}
	}
	return nil
}

// StartProcess starts argv with its stdio on fresh pipes. env nil means ours.
func StartProcess(argv []string, env []string) (*Process, error) {
	if len(argv) == 0 {
		return nil, &StartError{Command: []string{""}, Err: errors.New("no command given")}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, &StartError{Command: argv, Err: lookPathReason(err)}
	}
	p := &Process{done: make(chan struct{})}
	var theirs []*os.File
	pipe := func(ourRead bool) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		if ourRead {
			theirs = append(theirs, w)
			return r, nil
		}
		theirs = append(theirs, r)
		return w, nil
	}
	closeAll := func() {
		for _, f := range append(theirs, p.Stdin, p.Stdout, p.Stderr) {
			if f != nil {
				f.Close()
			}
		}
	}
	if p.Stdin, err = pipe(false); err == nil {
		if p.Stdout, err = pipe(true); err == nil {
			p.Stderr, err = pipe(true)
		}
	}
	if err != nil {
		closeAll()
		return nil, &StartError{Command: argv, Err: err}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs[0], theirs[1], theirs[2]
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, &StartError{Command: argv, Err: err}
	}
	for _, f := range theirs {
		f.Close() // the child holds its own copies; ours would keep EOF from coming
	}
	p.cmd = cmd
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.done)
	}()
	return p, nil
}

func lookPathReason(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		if errors.Is(e.Err, exec.ErrNotFound) {
			return errors.New("command not found (is it installed and on PATH?)")
		}
		if errors.Is(e.Err, os.ErrPermission) {
			return errors.New("permission denied (is the file executable?)")
		}
		return e.Err
	}
	return err
}

// PID is the child's process id, which is also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// waitExit waits up to d for the child to exit and reports whether it did:
// each rung of a shutdown ladder.
func (p *Process) waitExit(d time.Duration) bool { return waitAtMost(p.done, d) }

// waitExitCounted is waitExit with d counted at the share of a core the
// process could have had (wall time when share is nil), and never longer
// than five times d on the wall clock.
func (p *Process) waitExitCounted(d time.Duration, share func() float64) bool {
	if share == nil {
		return p.waitExit(d)
	}
	t := machine.NewTimer(d, share)
	defer t.Stop()
	limit := time.NewTimer(5 * d)
	defer limit.Stop()
	for {
		select {
		case <-p.done:
			return true
		case <-limit.C:
			return false
		case <-t.C():
			if t.Expired() {
				return false
			}
		}
	}
}

// waitAtMost waits up to d for ch to deliver or close, and reports whether
// it did.
func waitAtMost[T any](ch <-chan T, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// Exit describes how the child ended; valid after Done.
func (p *Process) Exit() (code *int, signal string) {
	if sig := p.exitSignal(); sig != "" {
		return nil, sig
	}
	c := p.state.ExitCode()
	return &c, ""
}

// CloseStdin closes the child's stdin once; it reports whether this call closed it.
func (p *Process) CloseStdin() bool {
	closed := false
	p.closeStdin.Do(func() {
		p.Stdin.Close()
		closed = true
	})
	return closed
}
