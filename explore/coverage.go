package explore

import (
	"cmp"
	"slices"
)

// coverage tallies, for each family and method, what the systematic pass
// did with its points, and names the families the search did not reach.
func (s *search) coverage() {
	type key struct{ family, method string }
	rows := map[key]*Coverage{}
	var order []key
	reached := map[string]bool{}
	for pi, p := range s.o.Points {
		if !s.mine[pi] {
			continue
		}
		k := key{p.Fault.Label(), p.Fault.At.Method}
		if k.method == "" {
			k.method = "(its own moment)"
		}
		c := rows[k]
		if c == nil {
			c = &Coverage{Family: k.family, Method: k.method}
			rows[k] = c
			order = append(order, k)
		}
		c.Points++
		if _, ok := reached[k.family]; !ok {
			reached[k.family] = false
		}
		switch ri, ran := s.trial[pi]; {
		case ran:
			reached[k.family] = true
			c.Run++
			r := s.res.Runs[ri]
			if !r.Landed {
				c.NotLanded++
			}
			if len(r.Signatures) > 0 {
				c.Found++
			}
		case s.skipped[pi]:
			reached[k.family] = true
			c.Skipped++
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.family, b.family), cmp.Compare(a.method, b.method))
	})
	for _, k := range order {
		s.res.Coverage = append(s.res.Coverage, *rows[k])
	}
	for _, f := range families {
		if r, ok := reached[f.name]; ok && !r && !slices.Contains(s.res.Unreached, f.name) {
			s.res.Unreached = append(s.res.Unreached, f.name)
		}
	}
}
