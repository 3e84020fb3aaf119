// Package wire is the shared vocabulary of mcpchaos: a JSON-RPC message with its
// original bytes and its classification, the two directions of an MCP session,
// and the transcript event that every other package records or reads.
//
// It is a leaf package so that the import graph stays one-way:
// cmd -> chaos, faults, reports -> wire.
package wire
