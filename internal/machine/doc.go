// Package machine reads what the machine mcpchaos runs on has to give: its
// cores, its free memory, how busy its CPU is, and how much of a core a
// process that wants one gets now. A matrix is sized by it, and the probe's
// deadlines are counted in the CPU time a peer could have had, so that a
// handler slowed by its neighbours on a busy machine is not judged hung.
package machine
