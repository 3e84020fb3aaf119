// Package proof holds regression proofs against real SDK releases: each test
// runs mcpchaos's own suite against an example server built on a pinned
// release that has a known bug and on the release that fixed it, and pins
// what the judge finds in each. The SDKs are installed by scripts/install-sdks
// under .sdk/; a proof whose SDK is missing fails, it never skips.
package proof
