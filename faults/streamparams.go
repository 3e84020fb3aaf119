package faults

// The parameters that point a fault at HTTP's parts: which event stream it
// acts on (stream=get), and what becomes of the server's side of a
// connection it cuts (server=close|read).

// streamParam points a fault at the client's standalone GET stream. doc
// says what the fault then does there.
func streamParam(doc string) Param {
	return Param{Name: "stream", Type: TypeChoice, Choices: []string{StreamGET}, HTTPOnly: true,
		Doc: "HTTP: get acts on the client's open standalone GET stream (the one it opens for the server's own messages; on the legacy transport, its one stream) at the trigger's moment, " +
			"instead of on the triggering message's exchange: " + doc + "; skipped when none is open"}
}

// serverSideParam says what a cut does to the server's side of the
// connection it cuts.
var serverSideParam = Param{Name: "server", Type: TypeChoice, Choices: []string{"close", "read"}, Default: "close", HTTPOnly: true,
	Doc: "HTTP: the server's side of the cut connection: close ends it too, as a real network cut does, so the server sees its client leave " +
		"(what it still had to send there never arrives); read keeps it open and reads what the server still sends into the record, as dropped"}

// cutTarget is how a cut (eof, reset) reads its HTTP parameters.
type cutTarget struct {
	stream string
	keep   bool
}

func newCutTarget(v Values) cutTarget {
	return cutTarget{stream: v.String("stream"), keep: v.String("server") == "read"}
}

// apply sets the cut's target on e, and says so in its detail.
func (c cutTarget) apply(e Effect) Effect {
	e.Stream, e.KeepServerSide = c.stream, c.keep
	if c.stream == StreamGET {
		e.Detail += " (its GET stream)"
	}
	if c.keep {
		e.Detail += "; the server's side stays open and is read into the record"
	}
	return e
}

// HTTPParams lists the parameters the spec gave that mean something on
// HTTP only.
func (f *Fault) HTTPParams() []string { return f.httpParams }
