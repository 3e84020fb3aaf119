// Package explore searches a target's fault space instead of running a
// fixed matrix: from the messages of its baseline session it enumerates the
// fault points (each message, by direction, kind, method and position,
// times each fault family that can act on it), runs them one fault a run,
// skipping points equivalent to one already run, then seeded combinations
// of two or three faults with the time left; it groups what it finds by
// signature and shrinks each group's plan to the smallest that still
// reproduces, as property-based testing shrinks a failing case.
//
// It decides what to run; package suite runs and judges each run.
package explore
