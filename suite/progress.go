package suite

import "time"

// Progress hears of each scenario of a matrix as it starts and as it ends,
// for a live display of a long run. The baseline starts first; with more
// than one scenario at a time, the others start beside it and may end
// before it (their end is told once the baseline's findings are known).
// Its methods may be called from several goroutines at once.
type Progress interface {
	Started(scenario string)
	// Finished gives the scenario's outcome and its own findings (those
	// the baseline did not already have), as the report will.
	Finished(scenario, outcome string, findings int, took time.Duration)
}

// ProgressAgain is a Progress that hears when the matrix runs again from
// its baseline (in the stateful era, after the server failed on
// server/discover), and why.
type ProgressAgain interface {
	Progress
	Again(why string)
}
