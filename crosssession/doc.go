// Package crosssession judges the sessions of one run side by side: several
// probe sessions that worked at once against one server, each recorded in
// its own transcript and judged on its own by package judge. It sits above
// the per-session judge and never reaches into it: it reads the sessions'
// events (what each client sent, with its marker, and what each received)
// and their verdicts, and reports what crossed between them. One session's
// answer, progress, log line or server request delivered to another is a
// data leak between users; a fault confined to one session (its stream cut,
// its DELETE) that harms another session's calls is a failure of isolation;
// a server that refuses a second session serves one client at a time, which
// is said in a note and makes the run indeterminate, not a finding.
//
// It merges the sessions' own verdicts too: a finding every session's judge
// made (a crash of the one server, seen in each record) is reported once,
// naming the sessions it was read from.
package crosssession
