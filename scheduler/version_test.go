package scheduler

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestFeasibility_VersionConstraintEdges pins the cases where Nomad's
// version libraries decide: pre-releases, build metadata, the pessimistic
// operator, several terms, and values that are not versions.
func TestFeasibility_VersionConstraintEdges(t *testing.T) {
	cases := []struct {
		have, op, want string
		ok             bool
	}{
		// version: a pre-release satisfies only terms naming a
		// pre-release of the same version.
		{"1.2.0-beta.1", "version", ">= 1.2.0-alpha", true},
		{"1.2.0-beta.1", "version", ">= 1.1.0-alpha", false},
		{"1.2.0-beta.1", "version", "< 1.2.0", false},
		{"1.2.0-beta.1", "version", ">= 1.0", false},
		{"1.2.0", "version", "> 1.2.0-rc.1", true},
		{"1.2.0-rc.10", "version", "> 1.2.0-rc.9", true}, // numeric identifiers compare as numbers
		// semver: plain Semantic Versioning order.
		{"1.2.0-beta.1", "semver", "< 1.2.0", true},
		{"1.2.0-beta.1", "semver", ">= 1.1.0", true},
		{"1.2.0-beta.1", "semver", ">= 1.2.0-alpha, < 1.2.0", true},
		{"1.2.0-rc.1", "semver", "> 1.2.0-beta.2", true},
		{"1.2.3beta", "semver", ">= 1.0", true}, // the node's side is read leniently
		// Build metadata takes no part in the order.
		{"1.2.3+ent", "version", "= 1.2.3", true},
		{"1.2.3+ent", "version", "> 1.2.3", false},
		{"1.2.3", "version", "= 1.2.3+ent", true},
		{"1.2.3+ent", "semver", "= 1.2.3", true},
		// Missing segments are zeros, and a "v" prefix is allowed.
		{"1.9", "version", "= 1.9.0", true},
		{"v1.9.3", "version", ">= 1.9", true},
		// ~> fixes every segment but the last one given.
		{"1.9.3", "version", "~> 1.9", true},
		{"1.10.0", "version", "~> 1.9", true},
		{"2.0.0", "version", "~> 1.9", false},
		{"1.9.3", "version", "~> 1.9.4", false},
		{"1.9.7", "version", "~> 1.9.4", true},
		{"1.10.0", "version", "~> 1.9.4", false},
		{"1.9.4-beta", "version", "~> 1.9.4-alpha", true},
		{"1.9.5", "version", "~> 1.9.4-alpha", false}, // a pre-release ~> admits only pre-releases
		{"1.9.3", "semver", "~> 1.9", false},          // semver has no ~>
		{"2.5", "version", "~> 1", true},              // one segment fixes nothing
		// Every comma-separated term must hold.
		{"1.9.3", "version", ">= 1.0, < 1.9.3", false},
		{"1.9.3", "version", ">= 1.0, != 1.9.3", false},
		{"1.9.3", "version", ">=1.0,<2.0,!=1.9.2", true},
		{"1.9.3", "semver", ">= 1.0, < 2.0, != 1.9.2", true},
		// Values that are not versions or constraints match nothing.
		{"latest", "version", ">= 1.0", false},
		{"1.9.3 ", "version", ">= 1.0", false},
		{"1.9.3", "version", "== 1.9.3", false},
		{"1.9.3", "version", ">= 1.0,", false},
		{"1.9.3", "semver", "1.9.3beta", false},
	}
	ctx := newEvalContext(nil, nil, "", nil)
	for _, tc := range cases {
		n := mockNode(1)
		n.Attributes["app.version"] = tc.have
		c := &structs.Constraint{LTarget: "${attr.app.version}", Operand: tc.op, RTarget: tc.want}
		t.Run(tc.have+" "+tc.op+" "+tc.want, func(t *testing.T) {
			must.Eq(t, tc.ok, checkConstraint(ctx, c, n))
		})
	}
}

// BenchmarkVersionConstraint measures one feasibility check of a version
// or semver constraint, the way a scheduling attempt makes them: one
// evaluation context, the constraint parsed once and checked against many
// nodes whose versions differ.
func BenchmarkVersionConstraint(b *testing.B) {
	nodes := make([]*structs.Node, 64)
	for i := range nodes {
		nodes[i] = mockNode(i)
		nodes[i].Attributes["nomad.version"] = fmt.Sprintf("1.%d.%d", i%12, i%5)
		if i%8 == 0 {
			nodes[i].Attributes["nomad.version"] += "-beta.1"
		}
	}
	for _, c := range []*structs.Constraint{
		{LTarget: "${attr.nomad.version}", Operand: structs.ConstraintVersion, RTarget: ">= 1.2, < 2"},
		{LTarget: "${attr.nomad.version}", Operand: structs.ConstraintVersion, RTarget: "~> 1.9.0"},
		{LTarget: "${attr.nomad.version}", Operand: structs.ConstraintSemver, RTarget: ">= 1.4.0-alpha, < 1.10"},
	} {
		b.Run(c.Operand+" "+c.RTarget, func(b *testing.B) {
			ctx := newEvalContext(nil, nil, "", nil)
			matched := 0
			b.ReportAllocs()
			for i := range b.N {
				if checkConstraint(ctx, c, nodes[i%len(nodes)]) {
					matched++
				}
			}
			b.StopTimer()
			if b.N >= len(nodes) {
				must.Positive(b, matched)
			}
		})
	}
}
