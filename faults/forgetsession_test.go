package faults

import (
	"slices"
	"strings"
	"testing"
)

// The forged id must be one the server never issued, yet pass whatever
// check of form the server makes before it looks the id up: the ids below
// are what the real servers issued (server-everything and the TypeScript
// SDK: a UUID; the Python SDK: uuid4().hex; go-sdk: base32; mcp-go:
// "mcp-session-" and a UUID).
func TestForgeSessionIDKeepsTheShape(t *testing.T) {
	for _, id := range []string{
		"b8de62a3-5e0c-4ae1-ac60-226faf10e8b7",
		"532cb653e2b64479998890d9d508d660",
		"5ECN7VLXJW7OVBAJFN7SPKN7KT",
		"mcp-session-da107762-1f65-4980-9469-eabef1d5a24f",
		"AbCdEfGhIjKlMnOpQrStUvWx_-yZ",
	} {
		t.Run(id, func(t *testing.T) {
			forged := ForgeSessionID(id, 1)
			t.Logf("%s -> %s", id, forged)
			if forged == id {
				t.Fatal("the forged id is the client's")
			}
			if len(forged) != len(id) {
				t.Errorf("length %d, want %d", len(forged), len(id))
			}
			// Separators stay where they were, and each run keeps its
			// characters (so its alphabet), only their order changes.
			runs := func(s string) []string {
				return strings.FieldsFunc(s, func(r rune) bool { return r < 128 && !isAlnum(byte(r)) })
			}
			a, b := runs(id), runs(forged)
			if len(a) != len(b) {
				t.Fatalf("runs %q, want the shape of %q", b, a)
			}
			for i := range a {
				x, y := []byte(a[i]), []byte(b[i])
				slices.Sort(x)
				slices.Sort(y)
				if string(x) != string(y) {
					t.Errorf("run %q became %q: not the same characters", a[i], b[i])
				}
			}
			for i := range id {
				if !isAlnum(id[i]) && forged[i] != id[i] {
					t.Errorf("separator %q at %d became %q", id[i], i, forged[i])
				}
			}
		})
	}
}

func TestForgeSessionIDKeepsWordsAndUUIDVersion(t *testing.T) {
	const id = "mcp-session-da107762-1f65-4980-9469-eabef1d5a24f"
	for seed := uint64(0); seed < 50; seed++ {
		forged := ForgeSessionID(id, seed)
		if !strings.HasPrefix(forged, "mcp-session-") {
			t.Fatalf("seed %d: %s lost the prefix's words", seed, forged)
		}
		// Version (4) and variant (9) digits of the UUID part.
		if forged[12+14] != '4' || forged[12+19] != '9' {
			t.Fatalf("seed %d: %s moved the UUID's version or variant digit", seed, forged)
		}
	}
}

// Same seed, same id; another seed, another id: a replay forges the same.
func TestForgeSessionIDIsSeeded(t *testing.T) {
	const id = "532cb653e2b64479998890d9d508d660"
	if a, b := ForgeSessionID(id, 7), ForgeSessionID(id, 7); a != b {
		t.Errorf("seed 7 forged %s, then %s", a, b)
	}
	seen := map[string]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		seen[ForgeSessionID(id, seed)] = true
	}
	if len(seen) < 20 {
		t.Errorf("20 seeds forged %d distinct ids", len(seen))
	}
}

// An id with nothing to shuffle (words, one repeated character) still
// gets an id the server never issued, plainly mcpchaos's.
func TestForgeSessionIDWithNothingToShuffle(t *testing.T) {
	for _, id := range []string{"session", "aaaaaaaaaaaaaaaaaaaa", "x"} {
		forged := ForgeSessionID(id, 3)
		if forged == id || !strings.HasPrefix(forged, "mcpchaos-forgotten-") {
			t.Errorf("%q forged as %q; want an id of mcpchaos's own", id, forged)
		}
	}
}

// The fault fires where its trigger says, and draws its seed from the
// plan's: the same run seed forges the same id.
func TestForgetSessionFires(t *testing.T) {
	frames := []frame{
		request(c2s, "1", "initialize", ""),
		request(c2s, "2", "tools/list", ""),
		request(c2s, "3", "tools/call", ""),
		request(c2s, "4", "tools/call", ""),
	}
	run := func(seed uint64) []decision { return runPlan(t, seed, []string{"forget-session"}, frames) }
	ds := run(5)
	if got := firedAt(ds, "forget-session#1"); !slices.Equal(got, []int{3}) {
		t.Fatalf("fired at %v; want once, at the first tools/call", got)
	}
	if ds[0].Phase != Before || ds[0].Effect.ForgetSession == nil {
		t.Fatalf("decision %+v; want a ForgetSession before the call goes on", ds[0])
	}
	if again := run(5); again[0].Effect.ForgetSession.Seed != ds[0].Effect.ForgetSession.Seed {
		t.Error("the same run seed drew another forging seed")
	}
	if other := run(6); other[0].Effect.ForgetSession.Seed == ds[0].Effect.ForgetSession.Seed {
		t.Error("another run seed drew the same forging seed")
	}
}
