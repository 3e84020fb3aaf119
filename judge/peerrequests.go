package judge

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcpchaos/mcpchaos/wire"
)

// peerRequests follows the requests the peer under judgement sends the
// other side (a server's sampling/createMessage, elicitation/create,
// roots/list; a client's to the server while it handles one of the
// server's) until the relay says whether it delivered them. A handler that
// asked the other side something waits for the answer; when mcpchaos kept
// the question from the other side, the call that handler serves stays
// open for a reason of mcpchaos's making.
type peerRequests struct {
	// sent are the requests the relay has not yet delivered or dropped,
	// by the seq of their received event.
	sent map[int64]lostRequest
	// lost are those it dropped; at most maxTolerated. sorted says they
	// are in the order they were sent (by seq), which waitedOn needs.
	lost   []lostRequest
	sorted bool
	// methods are the methods of the requests the peer sent, by id, and
	// answers the other side's answers to them, by the seq of their
	// received event: an answer refused on its way (an HTTP error status)
	// leaves the request as unanswered as one never delivered.
	methods map[string]string
	answers map[int64]string
}

type lostRequest struct {
	id, method string
	seq, t     int64  // of the received event
	why        string // the dropped event's detail
	// answer says the request was delivered, and the other side's
	// answer to it is what never came back (seq and t are the answer's).
	answer bool
}

func (p *peerRequests) received(e *wire.Event) {
	if e.Kind != "request" {
		return
	}
	if p.sent == nil {
		p.sent = map[int64]lostRequest{}
	}
	if len(p.sent) < maxTolerated {
		p.sent[e.Seq] = lostRequest{id: e.ID, method: e.Method, seq: e.Seq, t: e.T}
	}
	if p.methods == nil {
		p.methods = map[string]string{}
	}
	if len(p.methods) < maxTolerated {
		p.methods[e.ID] = e.Method
	}
}

// answer notes the other side's answer to one of the peer's requests.
func (p *peerRequests) answer(e *wire.Event) {
	if e.Kind != "response" && e.Kind != "error" || p.methods[e.ID] == "" {
		return
	}
	if p.answers == nil {
		p.answers = map[int64]string{}
	}
	if len(p.answers) < maxTolerated {
		p.answers[e.Seq] = e.ID
	}
}

// answerRefused is an HTTP error status refusing the message received as
// e.Of: when it was an answer to one of the peer's requests, the peer
// never got it, as if its request had never been delivered.
func (p *peerRequests) answerRefused(e *wire.Event) {
	id, ok := p.answers[e.Of]
	if !ok || len(p.lost) >= maxTolerated {
		return
	}
	delete(p.answers, e.Of)
	p.sorted = p.sorted && (len(p.lost) == 0 || p.lost[len(p.lost)-1].seq < e.Of)
	p.lost = append(p.lost, lostRequest{id: id, method: p.methods[id], seq: e.Of, t: e.T, why: fmt.Sprintf("refused with HTTP %d", e.Status), answer: true})
}

// settled is the relay's word on the frame received as e.Of: delivered
// (forwarded) or not (dropped).
func (p *peerRequests) settled(e *wire.Event, delivered bool) {
	r, ok := p.sent[e.Of]
	if !ok {
		return
	}
	delete(p.sent, e.Of)
	if delivered || len(p.lost) >= maxTolerated {
		return
	}
	r.why = e.Detail
	p.sorted = p.sorted && (len(p.lost) == 0 || p.lost[len(p.lost)-1].seq < r.seq)
	p.lost = append(p.lost, r)
}

// waitedOn returns a request the peer sent after r was delivered to it and
// by its deadline d, which never reached the other side: r's handler may
// be the one waiting for its answer.
//
// Every open request asks, so the answer is a binary search: the first
// request sent after r is also the earliest, and the one to hold to d. A
// session of many unanswered calls (a wrap around an echo) would otherwise
// cost their number times maxTolerated.
func (p *peerRequests) waitedOn(r *openReq, d int64) *lostRequest {
	if !p.sorted {
		slices.SortFunc(p.lost, func(a, b lostRequest) int { return cmp.Compare(a.seq, b.seq) })
		p.sorted = true
	}
	i, _ := slices.BinarySearchFunc(p.lost, r.fwd.Seq+1, func(l lostRequest, seq int64) int { return cmp.Compare(l.seq, seq) })
	if i < len(p.lost) && p.lost[i].t <= d {
		return &p.lost[i]
	}
	return nil
}
