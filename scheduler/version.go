package scheduler

import (
	"strconv"
	"strings"
)

// version is a parsed dotted version with an optional pre-release.
type version struct {
	segs []int64
	pre  string
}

// parseVersion accepts "1", "1.2", "v1.2.3", "1.2.3-beta.1+meta".
func parseVersion(s string) (version, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	var v version
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.pre = s[i+1:]
		s = s[:i]
		if v.pre == "" {
			return v, false
		}
	}
	if s == "" {
		return v, false
	}
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return v, false
		}
		v.segs = append(v.segs, n)
	}
	return v, true
}

// compareSegments compares the numeric parts, missing segments being 0.
func compareSegments(a, b []int64) int {
	n := max(len(a), len(b))
	for i := range n {
		var x, y int64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

// compareVersions orders versions the semver way: a release sorts after
// its pre-releases, and pre-release identifiers compare numerically when
// both are numbers.
func compareVersions(a, b version) int {
	if c := compareSegments(a.segs, b.segs); c != 0 {
		return c
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	pa, pb := strings.Split(a.pre, "."), strings.Split(b.pre, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.ParseInt(pa[i], 10, 64)
		nb, eb := strconv.ParseInt(pb[i], 10, 64)
		switch {
		case ea == nil && eb == nil:
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		default:
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
		}
	}
	switch {
	case len(pa) < len(pb):
		return -1
	case len(pa) > len(pb):
		return 1
	}
	return 0
}

// versionTerm is one "<op> <version>" of a constraint.
type versionTerm struct {
	op string
	v  version
}

// versionConstraint is a comma-separated conjunction such as
// ">= 1.2, < 2". With strictPre unset (the "version" operand), a
// pre-release only satisfies terms that name a pre-release of the same
// version, as hashicorp/go-version does; "semver" orders pre-releases
// plainly.
type versionConstraint struct {
	terms     []versionTerm
	strictPre bool
}

func parseVersionConstraint(s string, semver bool) *versionConstraint {
	vc := &versionConstraint{strictPre: !semver}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		op := ""
		for _, cand := range []string{">=", "<=", "!=", "~>", "==", ">", "<", "="} {
			if strings.HasPrefix(part, cand) {
				op = cand
				break
			}
		}
		v, ok := parseVersion(strings.TrimSpace(part[len(op):]))
		if !ok {
			return nil
		}
		if op == "" || op == "==" {
			op = "="
		}
		vc.terms = append(vc.terms, versionTerm{op, v})
	}
	if len(vc.terms) == 0 {
		return nil
	}
	return vc
}

func (vc *versionConstraint) matches(s string) bool {
	v, ok := parseVersion(s)
	if !ok {
		return false
	}
	for _, t := range vc.terms {
		if vc.strictPre && v.pre != "" && (t.v.pre == "" || compareSegments(v.segs, t.v.segs) != 0) {
			return false
		}
		c := compareVersions(v, t.v)
		var ok bool
		switch t.op {
		case "=":
			ok = c == 0
		case "!=":
			ok = c != 0
		case ">":
			ok = c > 0
		case ">=":
			ok = c >= 0
		case "<":
			ok = c < 0
		case "<=":
			ok = c <= 0
		case "~>":
			ok = c >= 0 && pessimisticUpper(v, t.v)
		}
		if !ok {
			return false
		}
	}
	return true
}

// pessimisticUpper checks the upper bound of "~> X.Y.Z": every segment but
// the last one given must match.
func pessimisticUpper(v, c version) bool {
	keep := len(c.segs) - 1
	if keep < 1 {
		keep = 1
	}
	for i := 0; i < keep; i++ {
		var x int64
		if i < len(v.segs) {
			x = v.segs[i]
		}
		if x != c.segs[i] {
			return false
		}
	}
	return true
}
