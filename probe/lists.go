package probe

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
)

// listEnd is how a paginated listing ended.
type listEnd int

const (
	// listComplete: a page without nextCursor came.
	listComplete listEnd = iota
	// listFailed: a page went unanswered, was refused or unreadable.
	listFailed
	// listTooLong: maxListPages pages came and the listing went on.
	listTooLong
	// listCursorRepeated: the server handed out a cursor it had already
	// handed out in this listing, so following it would never end.
	listCursorRepeated
)

// listPages follows the pages of a list method (tools/list, prompts/list,
// resources/list, resources/templates/list, tasks/list), at most
// maxListPages, handing each page's result to page. A cursor that repeats
// ends the listing at once: the judge makes it a finding from the
// transcript, and the probe must not loop on it.
func (s *session) listPages(method string, page func(result json.RawMessage)) listEnd {
	cursor := ""
	seen := map[string]bool{}
	for range maxListPages {
		var fields map[string]any
		if cursor != "" {
			fields = map[string]any{"cursor": cursor}
		}
		result, ok := s.roundTrip(method, fields, "")
		if !ok {
			return listFailed
		}
		var p struct {
			NextCursor *string `json:"nextCursor"`
		}
		if json.Unmarshal(result, &p) != nil {
			return listFailed
		}
		page(result)
		if p.NextCursor == nil || *p.NextCursor == "" {
			return listComplete
		}
		cursor = *p.NextCursor
		if seen[cursor] {
			s.sampled(fmt.Sprintf("%s: stopped following the listing when the server handed out cursor %q a second time", method, cursor))
			return listCursorRepeated
		}
		seen[cursor] = true
	}
	s.sampled(fmt.Sprintf("%s: followed %d pages, and the listing went on (the probe follows at most %d)", method, maxListPages, maxListPages))
	return listTooLong
}

// sample keeps at most k of the items offered to it, each offered item as
// likely as any other, chosen by the run's seed: the same listing under the
// same seed gives the same sample, so the baseline and every scenario
// exercise the same resources.
type sample[T any] struct {
	k       int
	rng     *rand.Rand
	seen    int
	indexed []indexed[T]
}

type indexed[T any] struct {
	i int
	v T
}

func newSample[T any](k int, seed uint64, what string) *sample[T] {
	h := fnv.New64a()
	_, _ = h.Write([]byte(what))
	return &sample[T]{k: k, rng: rand.New(rand.NewPCG(seed, h.Sum64()))}
}

// offer is reservoir sampling (Algorithm R): memory stays k items however
// long the listing.
func (s *sample[T]) offer(v T) {
	i := s.seen
	s.seen++
	if len(s.indexed) < s.k {
		s.indexed = append(s.indexed, indexed[T]{i, v})
		return
	}
	if j := s.rng.IntN(i + 1); j < s.k {
		s.indexed[j] = indexed[T]{i, v}
	}
}

// items returns the sample in listing order.
func (s *sample[T]) items() []T {
	sorted := slices.Clone(s.indexed)
	slices.SortFunc(sorted, func(a, b indexed[T]) int { return a.i - b.i })
	out := make([]T, len(sorted))
	for i, x := range sorted {
		out[i] = x.v
	}
	return out
}

// note says what the sample left out, or "" when it kept everything.
func (s *sample[T]) note(method, what string) string {
	if s.seen <= s.k {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d listed %s, chosen by the seed", method, s.k, s.seen, what)
}
