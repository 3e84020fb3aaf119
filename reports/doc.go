// Package reports judges mcpchaos transcripts and models the reports built
// from the verdicts. The judge is a pure function of the recorded events, so a
// stored transcript is judged offline exactly as it was live, and it streams:
// its memory follows the requests still open, not the length of the
// transcript. The report is the mcpchaos.report/v1 JSON contract of
// DESIGN.md, plus the short summary a person reads on stdout.
package reports
