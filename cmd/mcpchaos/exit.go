package main

import (
	"fmt"
	"io"
)

// Exit statuses are a contract (DESIGN.md): 0 no findings, 1 findings, 2 usage
// or set-up errors.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// usageError prints one line that says what went wrong and what to do.
func usageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "mcpchaos: "+format+"\n", a...)
	return exitUsage
}

// splitCommand separates flags from the command after "--".
func splitCommand(args []string) (flags, command []string, ok bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}
