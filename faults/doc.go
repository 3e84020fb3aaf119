// Package faults is the fault plan of an mcpchaos session: which faults exist
// (an explicit registry a test can list), how a fault spec is written and
// parsed, when a fault fires (triggers), and what it asks the transport to do
// (effects). It decides; the chaos package acts.
//
// Every random choice is drawn from the run's seed, the fault's identity, the
// message's direction and its ordinal in that direction, so the same seed and
// the same traffic give the same decisions, and adding a fault does not change
// another fault's draws.
package faults
