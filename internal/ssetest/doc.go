// Package ssetest holds scripted legacy HTTP+SSE servers for the tests of
// the packages that speak that transport: behaviours of real servers, kept
// small enough to read at a glance.
package ssetest
