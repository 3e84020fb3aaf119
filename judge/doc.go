// Package judge turns a recorded session (the events of a transcript) into
// a verdict: the findings held against the peer under test, each citing a
// rule of package reports, what a fault explains (notes), and why a
// scenario could not fail (indeterminate). It is a pure function of the
// events, so a stored transcript is judged offline exactly as it was live,
// and it streams: its memory follows the requests still open, not the
// length of the transcript. Its verdicts go into the reports of package
// reports; the import goes that one way.
package judge
