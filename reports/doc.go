// Package reports holds the report model, the mcpchaos.report/v1 JSON
// contract (a run's scenarios and findings, the rules findings cite, their
// kinds and severities), and what is made from a report: the terminal
// summary, Markdown, JUnit XML, GitHub annotations, the HTML timeline, the
// diff of two runs, baselines and the merge of sharded runs. The judge
// that produces the findings from transcripts is package judge; this
// package never reads a transcript except to draw a failing scenario's
// timeline.
package reports
