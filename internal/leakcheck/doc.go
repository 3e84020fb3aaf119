// Package leakcheck fails a test binary whose goroutines outlive its tests:
// no relay, stream, server or client a test starts may survive its run.
// Each package's TestMain names the package paths whose goroutines count.
package leakcheck
