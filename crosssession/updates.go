package crosssession

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mcpchaos/mcpchaos/reports"
)

// updates finds resources/updated notifications delivered to a session for
// a resource it never subscribed to and another session did: one client's
// subscriptions reaching another (a server that keeps one subscription
// list for every session). The receiving session's own update-not-subscribed
// finding, which this explains, is folded in.
func (c *crossing) updates(own []sessionFinding) []sessionFinding {
	crossed := map[int]bool{}
	for _, to := range c.j.sessions {
		if c.refused[to.n] || len(to.updates) == 0 {
			continue
		}
		uris := make([]string, 0, len(to.updates))
		for uri := range to.updates {
			uris = append(uris, uri)
		}
		sort.Strings(uris)
		for _, uri := range uris {
			if slices.Contains(to.subscribed, uri) {
				continue
			}
			for _, from := range c.j.sessions {
				if from == to || c.refused[from.n] || !slices.Contains(from.subscribed, uri) {
					continue
				}
				msg := fmt.Sprintf("session %d received notifications/resources/updated for %s, which it never subscribed to and session %d did: the server sends one session's subscriptions to another", to.n, uri, from.n)
				f := reports.NewFinding(reports.RuleCrossSessionUpdate, msg, []reports.Evidence{withSession(to.updates[uri], to.n)})
				f.Sessions = []int{from.n, to.n}
				c.found = append(c.found, f)
				crossed[to.n] = true
				break
			}
		}
	}
	return explained(own, crossed, reports.RuleUpdateNotSubscribed)
}

// explained drops the sessions' own findings of rule that a finding across
// sessions explains: those of the sessions crossed holds.
func explained(own []sessionFinding, crossed map[int]bool, rule string) []sessionFinding {
	return slices.DeleteFunc(own, func(sf sessionFinding) bool {
		return crossed[sf.n] && sf.f.Rule == rule
	})
}
