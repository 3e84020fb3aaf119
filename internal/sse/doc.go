// Package sse frames text/event-stream bodies into events and back. The
// chaos proxy needs each event's bytes as they travelled, so that an event
// no fault touches is passed on unchanged, and the probe's HTTP client
// needs the fields that steer resumption (id, retry); one parser serves
// both, so the two cannot disagree on where an event ends.
package sse
