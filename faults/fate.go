package faults

// Fate is what the faults fired before a message is forwarded decided
// about that message, composed in plan order as the package documentation
// says: the first drop or replace wins, the first rewrite, hold and
// fragment win, copies add up, injections after it accumulate. Both
// transports carry out the same Fate, so a stacked scenario means the same
// on stdio and on HTTP.
type Fate struct {
	// Dropped says why the message is not forwarded; "" forwards it.
	Dropped string
	// Replace is written instead of it, by fault ReplaceBy.
	Replace   []byte
	ReplaceBy string
	// Rewrite is forwarded instead of its bytes, by fault RewriteBy.
	Rewrite   []byte
	RewriteBy string
	// Copies is how many extra copies to forward after it.
	Copies int
	// Hold keeps it back (reorder, fault HoldBy).
	Hold   *Hold
	HoldBy string
	// Fragment writes it in pieces.
	Fragment *Fragment
	// After are the frames to inject once it has been dealt with.
	After []LabelledInjection
}

// LabelledInjection is an injection with the label of the fault that asked
// for it, for the transcript.
type LabelledInjection struct {
	Label string
	Injection
}

// Decided says whether the message's fate is sealed: dropped or replaced.
func (f *Fate) Decided() bool { return f.Dropped != "" || f.ReplaceBy != "" }

// Add composes the effect of the fault labelled label, fired before
// forwarding, into the fate.
func (f *Fate) Add(label string, e Effect) {
	decided := f.Decided()
	switch {
	case e.Drop && !decided:
		f.Dropped = "dropped by fault " + label
	case e.Replace != nil && !decided:
		f.Replace, f.ReplaceBy = e.Replace, label
	case e.Rewrite != nil && f.RewriteBy == "":
		f.Rewrite, f.RewriteBy = e.Rewrite, label
	}
	f.Copies += e.Copies
	if e.Hold != nil && f.Hold == nil {
		f.Hold, f.HoldBy = e.Hold, label
	}
	if e.Fragment != nil && f.Fragment == nil {
		f.Fragment = e.Fragment
	}
	for _, inj := range e.InjectAfter {
		f.After = append(f.After, LabelledInjection{label, inj})
	}
}
