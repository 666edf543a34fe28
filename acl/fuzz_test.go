package acl

import (
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// FuzzParse feeds ACL policy rules, HCL or JSON, to the parser as the
// policy endpoints do. Whatever the input it answers a policy or an
// error, never a panic; a policy it accepts, written back as HCL, parses
// to the same policy, and an ACL built from it answers every check.
func FuzzParse(f *testing.F) {
	for _, rules := range []string{
		`namespace "default" { policy = "read" }`,
		`namespace "default" { policy = "owner" }`,
		`namespace "default" { capabilities = ["read-jobs"] }`,
		`namespace "a b" { policy = "read" }`,
		`node { policy = "scale" }`,
		`sentinel { policy = "read" }`,
		`namespace "x" {`,
		"namespace \"x\" {\n variables {\n path \"*\" { capabilities = [\"own\"] }\n }\n}",
		`host_volume "x" { policy = "scale" }`,
		`{"namespace": {"default": {"policy": "write"}}, "node": {"policy": "read"}}`,
		`
namespace "default" { policy = "read" }
namespace "prod-*" { policy = "write" }
namespace "prod-secret" { policy = "deny" }
namespace "dev" { capabilities = ["submit-job", "read-logs"] }
namespace "*" { capabilities = ["list-jobs"] }
node { policy = "read" }
agent { policy = "write" }
operator { policy = "read" }
`,
		`
namespace "default" {
  policy = "write"
  variables {
    path "project/*" { capabilities = ["read", "list"] }
    path "project/secret" { capabilities = ["deny"] }
  }
}
host_volume "shared-*" { policy = "read" }
host_volume "scratch" { capabilities = ["mount-readwrite"] }
plugin { policy = "list" }
quota { policy = "read" }
`,
		`namespace "default" { policy = "scale" }`,
	} {
		f.Add(rules)
	}

	f.Fuzz(func(t *testing.T, rules string) {
		p, err := Parse(rules)
		if err != nil {
			if p != nil {
				t.Fatalf("parse returned a policy and an error: %v", err)
			}
			return
		}
		again, err := Parse(string(writePolicy(p)))
		if err != nil {
			t.Fatalf("policy written back does not parse: %v\n%s", err, writePolicy(p))
		}
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("policy written back parses differently:\nfirst  %#v\nsecond %#v", p, again)
		}
		a := New([]*Policy{p})
		for _, ns := range p.Namespaces {
			a.AllowNamespace(ns.Name)
			a.NamespaceCapabilities(ns.Name)
			for _, c := range validNamespaceCapabilities {
				a.AllowNamespaceOperation(ns.Name, c)
			}
			if ns.Variables != nil {
				for _, vp := range ns.Variables.Paths {
					a.AllowVariableOperation(ns.Name, vp.Path, VariablesCapabilityRead)
				}
			}
		}
		for _, hv := range p.HostVolumes {
			a.AllowHostVolumeOperation(hv.Name, HostVolumeCapabilityMountReadWrite)
		}
		a.AllowNodeWrite()
		a.AllowPluginList()
	})
}

// writePolicy renders p as HCL through its own hcl tags.
func writePolicy(p *Policy) []byte {
	f := hclwrite.NewEmptyFile()
	gohcl.EncodeIntoBody(p, f.Body())
	return f.Bytes()
}
