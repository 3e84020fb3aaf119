package crosssession

import (
	"bytes"
	"fmt"
	"strconv"
)

// markerStem starts every session's marker; the session's number and a
// nonce drawn from the run's seed follow, as in mcpchaos-s2-3fa9c1.
const markerStem = "mcpchaos-s"

// Marker is the marker of session k (1 is the first) of a run with this
// seed: what that session's client puts in its clientInfo name, its
// progress tokens and its free string arguments. The nonce keeps a marker
// from being guessed into a server's data by anything but the session, and
// the number after the stem, closed by a dash, keeps session 1's marker from
// being a prefix of session 10's.
func Marker(seed uint64, k int) string {
	return fmt.Sprintf("%s%d-%06x", markerStem, k, mix(seed^uint64(k)<<32)&0xffffff)
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// markedSessions returns the sessions whose marker-shaped text b holds, by
// number, and the markers as written; the caller checks each against the
// session's real marker, since a server may make up text of that shape.
func markedSessions(b []byte) map[int]string {
	var found map[int]string
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(markerStem))
		if j < 0 {
			return found
		}
		start := i + j
		at := start + len(markerStem)
		n := 0
		for at < len(b) && b[at] >= '0' && b[at] <= '9' && at-start-len(markerStem) < 3 {
			at++
		}
		digits := b[start+len(markerStem) : at]
		i = at
		if len(digits) == 0 || at+7 > len(b) || b[at] != '-' || !isHex(b[at+1:at+7]) {
			continue
		}
		n, _ = strconv.Atoi(string(digits))
		if found == nil {
			found = map[int]string{}
		}
		if _, seen := found[n]; !seen {
			found[n] = string(b[start : at+7])
		}
		i = at + 7
	}
}

func isHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
