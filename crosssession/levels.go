package crosssession

import (
	"fmt"
	"slices"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
)

// logLevels are the judge's: the MCP schema's LoggingLevel, least severe
// first.
var logLevels = judge.LogLevels

// levels finds a session that received log messages below the level it set
// only once another session had set a lower one: the server keeps one log
// level for every session, the last one set (the probe's first session sets
// info, the others debug, after it as often as not). A server that ignores
// levels altogether sends the first such message before the other session's
// level is set, and stays its session's own log-below-level finding. The
// receiving session's log-below-level finding, which this explains, is
// folded in. The sessions' records are compared by time: they start within
// a millisecond of one another.
func (c *crossing) levels(own []sessionFinding) []sessionFinding {
	crossed := map[int]bool{}
	for _, to := range c.j.sessions {
		if c.refused[to.n] || to.below == nil || !slices.ContainsFunc(own, func(sf sessionFinding) bool {
			return sf.n == to.n && sf.f.Rule == reports.RuleLogBelowLevel
		}) {
			continue
		}
		for _, from := range c.j.sessions {
			if from == to || c.refused[from.n] || from.levelSet == nil || from.level > to.belowLevel ||
				from.levelSet.TUS < to.levelSet.TUS || from.levelSet.TUS > to.below.TUS {
				continue
			}
			msg := fmt.Sprintf("session %d set logging/setLevel %q, and then received a %q log message after session %d had set %q: the server keeps one log level for every session, so one client's logging/setLevel changes what another receives",
				to.n, logLevels[to.level], logLevels[to.belowLevel], from.n, logLevels[from.level])
			ev := []reports.Evidence{withSession(*to.levelSet, to.n), withSession(*from.levelSet, from.n), withSession(*to.below, to.n)}
			f := reports.NewFinding(reports.RuleCrossSessionLogLevel, msg, ev)
			f.Sessions = []int{from.n, to.n}
			c.found = append(c.found, f)
			crossed[to.n] = true
			break
		}
	}
	return explained(own, crossed, reports.RuleLogBelowLevel)
}
