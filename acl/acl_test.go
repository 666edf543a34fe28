package acl

import (
	"testing"

	"github.com/shoenig/test/must"
)

func mustParse(t *testing.T, rules string) *Policy {
	t.Helper()
	p, err := Parse(rules)
	must.NoError(t, err)
	return p
}

func TestParse_Errors(t *testing.T) {
	cases := []struct {
		name, rules, want string
	}{
		{"empty", "  ", "policy rules are empty"},
		{"only comments", "# node { policy = \"read\" }\n", "policy rules are empty: they hold no namespace"},
		{"empty JSON object", "{}", "policy rules are empty: they hold no namespace"},
		{"bad namespace policy", `namespace "default" { policy = "owner" }`, `invalid namespace policy "owner" for namespace "default"`},
		{"bad capability", `namespace "default" { capabilities = ["read-jobs"] }`, `invalid namespace capability "read-jobs"`},
		{"bad namespace name", `namespace "a b" { policy = "read" }`, `invalid namespace name "a b"`},
		{"bad node policy", `node { policy = "scale" }`, `invalid node policy "scale"`},
		{"bad operator policy", `operator { policy = "all" }`, `invalid operator policy "all"`},
		{"unknown block", `sentinel { policy = "read" }`, `Unsupported block type`},
		{"syntax", `namespace "x" {`, `failed to parse ACL policy`},
		{"bad variable capability", "namespace \"x\" {\n variables {\n path \"*\" { capabilities = [\"own\"] }\n }\n}", `invalid variable capability "own"`},
		{"bad host volume policy", `host_volume "x" { policy = "scale" }`, `invalid host volume policy "scale"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.rules)
			must.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParse_JSON(t *testing.T) {
	p := mustParse(t, `{"namespace": {"default": {"policy": "write"}}, "node": {"policy": "read"}}`)
	a := New([]*Policy{p})
	must.True(t, a.AllowNamespaceOperation("default", NamespaceCapabilitySubmitJob))
	must.True(t, a.AllowNodeRead())
	must.False(t, a.AllowNodeWrite())
}

func TestACL_Checks(t *testing.T) {
	a := New([]*Policy{
		mustParse(t, `
namespace "default" { policy = "read" }
namespace "prod-*" { policy = "write" }
namespace "prod-secret" { policy = "deny" }
namespace "dev" { capabilities = ["submit-job", "read-logs"] }
namespace "*" { capabilities = ["list-jobs"] }
node { policy = "read" }
agent { policy = "write" }
operator { policy = "read" }
`),
		mustParse(t, `
namespace "dev" { capabilities = ["deny"] }
operator { policy = "write" }
`),
	})
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"read policy grants read-job", a.AllowNamespaceOperation("default", NamespaceCapabilityReadJob), true},
		{"read policy does not grant submit-job", a.AllowNamespaceOperation("default", NamespaceCapabilitySubmitJob), false},
		{"glob grants write", a.AllowNamespaceOperation("prod-api", NamespaceCapabilitySubmitJob), true},
		{"exact deny beats glob", a.AllowNamespaceOperation("prod-secret", NamespaceCapabilityReadJob), false},
		{"deny in a second policy wins", a.AllowNamespaceOperation("dev", NamespaceCapabilitySubmitJob), false},
		{"wildcard for other namespaces", a.AllowNamespaceOperation("batch", NamespaceCapabilityListJobs), true},
		{"wildcard grants only what it lists", a.AllowNamespaceOperation("batch", NamespaceCapabilityReadJob), false},
		{"closest glob wins over *", a.AllowNamespaceOperation("prod-x", NamespaceCapabilityAllocExec), true},
		{"node read", a.AllowNodeRead(), true},
		{"node write", a.AllowNodeWrite(), false},
		{"agent write implies read", a.AllowAgentRead(), true},
		{"operator: the broader grant", a.AllowOperatorWrite(), true},
		{"namespace any", a.AllowNamespace("default"), true},
		{"namespace any, denied", a.AllowNamespace("prod-secret"), false},
		{"not management", a.IsManagement(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { must.Eq(t, tc.want, tc.got) })
	}
}

func TestACL_DenyAndManagement(t *testing.T) {
	must.False(t, DenyAll.AllowNamespaceOperation("default", NamespaceCapabilityListJobs))
	must.False(t, DenyAll.AllowNodeRead())
	must.True(t, Management.AllowNamespaceOperation("anything", NamespaceCapabilityAllocExec))
	must.True(t, Management.AllowOperatorWrite())

	deny := New([]*Policy{mustParse(t, `node { policy = "write" }`), mustParse(t, `node { policy = "deny" }`)})
	must.False(t, deny.AllowNodeRead())
}

func TestACL_Variables(t *testing.T) {
	a := New([]*Policy{mustParse(t, `
namespace "default" {
  variables {
    path "nomad/jobs/*" { capabilities = ["read"] }
    path "team/*" { capabilities = ["write", "read", "list"] }
    path "team/secret" { capabilities = ["deny"] }
  }
}`)})
	must.True(t, a.AllowVariableOperation("default", "nomad/jobs/web", VariablesCapabilityRead))
	must.True(t, a.AllowVariableOperation("default", "nomad/jobs/web", VariablesCapabilityList))
	must.False(t, a.AllowVariableOperation("default", "nomad/jobs/web", VariablesCapabilityWrite))
	must.True(t, a.AllowVariableOperation("default", "team/x", VariablesCapabilityWrite))
	must.False(t, a.AllowVariableOperation("default", "team/secret", VariablesCapabilityRead))
	must.False(t, a.AllowVariableOperation("other", "team/x", VariablesCapabilityRead))
}

func TestACL_ScalePolicy(t *testing.T) {
	a := New([]*Policy{mustParse(t, `namespace "default" { policy = "scale" }`)})
	must.True(t, a.AllowNamespaceOperation("default", NamespaceCapabilityScaleJob))
	must.False(t, a.AllowNamespaceOperation("default", NamespaceCapabilitySubmitJob))
	must.False(t, a.AllowNamespaceOperation("default", NamespaceCapabilityReadJob))
}

func TestACL_AllowVariableSearch(t *testing.T) {
	cases := []struct {
		name   string
		policy string
		ns     string
		want   bool
	}{
		{"a path with read", "namespace \"default\" {\n  variables {\n    path \"app/*\" {\n      capabilities = [\"read\"]\n    }\n  }\n}", "default", true},
		{"another namespace", "namespace \"default\" {\n  variables {\n    path \"app/*\" {\n      capabilities = [\"read\"]\n    }\n  }\n}", "prod", false},
		{"only deny", "namespace \"default\" {\n  variables {\n    path \"*\" {\n      capabilities = [\"deny\"]\n    }\n  }\n}", "default", false},
		{"no variables block", `namespace "default" { policy = "read" }`, "default", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.policy)
			must.NoError(t, err)
			must.Eq(t, tc.want, New([]*Policy{p}).AllowVariableSearch(tc.ns))
		})
	}
	must.True(t, Management.AllowVariableSearch("any"))
}

// A check in the "*" namespace passes when some namespace grants the
// capability, as Nomad's does; the per-entry filter then decides.
func TestACL_AllNamespaces(t *testing.T) {
	a := New([]*Policy{mustParse(t, `
namespace "a" { policy = "read" }
namespace "b" { policy = "deny" }
`)})
	must.True(t, a.AllowNamespaceOperation(AllNamespaces, NamespaceCapabilityListJobs))
	must.True(t, a.AllowNamespace(AllNamespaces))
	must.False(t, a.AllowNamespaceOperation(AllNamespaces, NamespaceCapabilitySubmitJob), must.Sprint("no namespace grants submit-job"))
	allow := a.AllowNamespaceOperationFunc(NamespaceCapabilityReadJob)
	must.True(t, allow("a"))
	must.False(t, allow("b"))
	must.False(t, allow("c"))

	none := New([]*Policy{mustParse(t, `namespace "b" { policy = "deny" }`)})
	must.False(t, none.AllowNamespaceOperation(AllNamespaces, NamespaceCapabilityReadJob))
	must.False(t, none.AllowNamespace(AllNamespaces))
	must.True(t, Management.AllowNamespaceOperationFunc(NamespaceCapabilityReadJob)("anything"))
}

// node_pool blocks as Nomad reads them: write grants read, write and
// delete; the closest glob answers for a pool without its own block; a
// deny refuses everything; search needs some pool granting something.
func TestNodePoolRules(t *testing.T) {
	a := New([]*Policy{mustParse(t, `
node_pool "gpu" { policy = "write" }
node_pool "batch-*" { capabilities = ["read"] }
node_pool "batch-secret" { policy = "deny" }
`)})
	must.True(t, a.AllowNodePoolOperation("gpu", NodePoolCapabilityDelete))
	must.True(t, a.AllowNodePoolOperation("gpu", NodePoolCapabilityWrite))
	must.True(t, a.AllowNodePoolOperation("batch-1", NodePoolCapabilityRead))
	must.False(t, a.AllowNodePoolOperation("batch-1", NodePoolCapabilityWrite))
	must.False(t, a.AllowNodePoolOperation("batch-secret", NodePoolCapabilityRead))
	must.False(t, a.AllowNodePoolOperation("default", NodePoolCapabilityRead))
	must.True(t, a.AllowNodePool("batch-1"))
	must.False(t, a.AllowNodePool("batch-secret"))
	must.True(t, a.AllowNodePoolSearch())
	must.False(t, New([]*Policy{mustParse(t, `node { policy = "read" }`)}).AllowNodePoolSearch())
	must.True(t, Management.AllowNodePoolOperation("anything", NodePoolCapabilityDelete))

	for rules, want := range map[string]string{
		`node_pool "a b" { policy = "read" }`:              `invalid node pool name "a b"`,
		`node_pool "gpu" { policy = "scale" }`:             `invalid node pool policy "scale" for node pool "gpu"`,
		`node_pool "gpu" { capabilities = ["list-jobs"] }`: `invalid node pool capability "list-jobs" for node pool "gpu"`,
	} {
		_, err := Parse(rules)
		must.ErrorContains(t, err, want)
	}
}
