// Package suite runs `mcpchaos test`: it drives a server command through a
// no-fault baseline and a matrix of fault scenarios, each against a fresh
// process with the built-in probe client, judges each transcript and
// assembles the report.
package suite
