// Command soak drives MCP sessions over streamable HTTP through mcpchaos
// proxy, to show that the proxy's memory, threads and descriptors stay flat
// however long it runs (issue 31). It is a benchmark, not a test: a run
// takes minutes and its figures depend on the machine, so scripts/soak
// runs it by hand and docs/performance.md records what it printed.
//
// Two modes. -rounds N starts mcpchaos serve --http and the proxy in front
// with no fault, runs N rounds of -sessions concurrent sessions of -calls
// tool calls each, and prints the proxy's RSS after each round: the figure
// the issue was opened on. Without -rounds it
// is the soak: it starts mcpchaos serve --http and mcpchaos proxy --report
// (binary -bin) with a plan that delays, resets, answers in the server's
// place and forgets sessions, keeps -sessions sessions going for -duration
// (each initializes, makes -calls calls, and ends with DELETE or is
// abandoned), kills the upstream and restarts it once half way, samples the
// proxy's RSS, threads and open descriptors, and at the end checks that
// they stayed flat, that every failed call is explained by a fault or the
// restart, that sessions opened after the restart were served, and that
// the report says what happened.
package main
