package release

import (
	"fmt"
	"regexp"
)

// semver is the subset of Semantic Versioning a release may use: X.Y.Z, or
// a pre-release of it named alpha, beta, rc or dev with a number. npm takes
// it as it is; PEP 440 spells the same versions differently (PythonVersion).
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-(alpha|beta|rc|dev)\.(0|[1-9][0-9]*))?$`)

// CheckVersion says whether v can be a release version on every registry.
func CheckVersion(v string) error {
	if !semver.MatchString(v) {
		return fmt.Errorf("version %q is not X.Y.Z or X.Y.Z-{alpha,beta,rc,dev}.N (no leading v): npm and PyPI must both accept it", v)
	}
	return nil
}

// PythonVersion is v as PEP 440 normalizes it: 1.2.3-rc.1 is 1.2.3rc1,
// 1.2.3-dev.4 is 1.2.3.dev4. A wheel must carry the normalized spelling in
// its file name and metadata, or pip refuses it.
func PythonVersion(v string) (string, error) {
	m := semver.FindStringSubmatch(v)
	if m == nil {
		return "", CheckVersion(v)
	}
	base := m[1] + "." + m[2] + "." + m[3]
	switch m[4] {
	case "":
		return base, nil
	case "alpha":
		return base + "a" + m[5], nil
	case "beta":
		return base + "b" + m[5], nil
	case "rc":
		return base + "rc" + m[5], nil
	default: // dev
		return base + ".dev" + m[5], nil
	}
}
