package judge

import (
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
	// lost are those it dropped, in the order they were sent; at most
	// maxTolerated.
	lost []lostRequest
}

type lostRequest struct {
	id, method string
	seq, t     int64  // of the received event
	why        string // the dropped event's detail
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
	p.lost = append(p.lost, r)
}

// waitedOn returns a request the peer sent after r was delivered to it and
// by its deadline d, which never reached the other side: r's handler may
// be the one waiting for its answer.
func (p *peerRequests) waitedOn(r *openReq, d int64) *lostRequest {
	for i := range p.lost {
		l := &p.lost[i]
		if l.seq > r.fwd.Seq && l.t <= d {
			return l
		}
	}
	return nil
}
