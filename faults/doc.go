// Package faults is the fault plan of an mcpchaos session: which faults exist
// (an explicit registry a test can list), how a fault spec is written and
// parsed, when a fault fires (triggers), and what it asks the transport to do
// (effects). It decides; the chaos package acts.
//
// Every random choice is drawn from the run's seed, the fault's identity, the
// message's direction and its ordinal in that direction, so the same seed and
// the same traffic give the same decisions, and adding a fault does not change
// another fault's draws.
//
// Stacked faults compose in plan order, the order the specs were given. For
// each message, the faults of the Before phase are decided in plan order and
// their effects carried out in that order; then the message is forwarded (or
// not), then the After phase goes the same way. For the triggering message
// itself: the first fault that drops or replaces it wins (a later replace or
// drop of the same message is recorded but changes nothing); when it is
// forwarded, the copies of every fault add up (a dropped or replaced message
// is not copied); delays add up. Every fault counts its own matches: one
// fault firing never hides the message from another's trigger.
//
// Triggers with from= and until= read the session's clock (WithClock,
// SetClock), the only input of a decision besides the traffic and the seed;
// a test that injects the clock gets the same decisions every time.
package faults
