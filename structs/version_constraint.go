package structs

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/go-version"
)

// VersionConstraint is the parsed value of a "version" or "semver"
// constraint: it reports whether a version satisfies every term.
type VersionConstraint interface {
	Check(v *version.Version) bool
}

// ParseVersionConstraint parses the value of a "version" constraint
// (semver unset) or a "semver" one, with Nomad's rules for each.
//
// "version" is hashicorp/go-version's syntax: comma-separated terms, each
// an optional operator (=, !=, >, >=, <, <=, ~>) and a version. A
// pre-release version satisfies an ordering term only when the term names
// a pre-release of the same version, so "1.2.0-beta.1" fails ">= 1.0".
//
// "semver" takes the same operators but ~>, requires a "-" before a
// pre-release, and orders versions by Semantic Versioning 2.0 alone, so
// "1.2.0-beta.1" satisfies ">= 1.0" and fails ">= 1.2.0".
func ParseVersionConstraint(s string, semver bool) (VersionConstraint, error) {
	var c VersionConstraint
	var err error
	if semver {
		c, err = parseSemverConstraint(s)
	} else {
		c, err = version.NewConstraint(s)
	}
	if err != nil {
		// Not the typed nil slice the parsers return with an error.
		return nil, err
	}
	return c, nil
}

// semverTermPattern matches one term of a semver constraint: an optional
// operator, then a version in go-version's strict semver form.
var semverTermPattern = regexp.MustCompile(`^\s*(<=|>=|!=|<|>|=|)\s*(` + version.SemverRegexpRaw + `)\s*$`)

// semverTerm is one "<op> <version>" of a semver constraint.
type semverTerm struct {
	op string
	v  *version.Version
}

// semverConstraint is a conjunction of semver terms. go-version only
// offers the "version" flavour, whose pre-release rule semver must not
// have, so the terms compare with Version.Compare directly.
type semverConstraint []semverTerm

func parseSemverConstraint(s string) (semverConstraint, error) {
	var c semverConstraint
	for term := range strings.SplitSeq(s, ",") {
		m := semverTermPattern.FindStringSubmatch(term)
		if m == nil {
			return nil, fmt.Errorf("malformed constraint: %s", term)
		}
		v, err := version.NewSemver(m[2])
		if err != nil {
			return nil, err
		}
		c = append(c, semverTerm{op: m[1], v: v})
	}
	return c, nil
}

// Check reports whether v satisfies every term.
func (c semverConstraint) Check(v *version.Version) bool {
	for _, t := range c {
		cmp := v.Compare(t.v)
		var ok bool
		switch t.op {
		case "", "=":
			ok = cmp == 0
		case "!=":
			ok = cmp != 0
		case ">":
			ok = cmp > 0
		case ">=":
			ok = cmp >= 0
		case "<":
			ok = cmp < 0
		case "<=":
			ok = cmp <= 0
		}
		if !ok {
			return false
		}
	}
	return true
}
