package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestACLAuthMethods_DefaultAndCascade(t *testing.T) {
	s := testStore(t)
	method := func(name string, def bool) *structs.ACLAuthMethod {
		return &structs.ACLAuthMethod{Name: name, Type: structs.ACLAuthMethodTypeJWT, TokenLocality: "local",
			MaxTokenTTL: time.Hour, Default: def, Config: &structs.ACLAuthMethodConfig{JWKSURL: "https://k"}}
	}
	must.NoError(t, s.UpsertACLAuthMethods(5, []*structs.ACLAuthMethod{method("a", true), method("b", false)}))

	// A second default is refused and nothing of the write is kept.
	err := s.UpsertACLAuthMethods(6, []*structs.ACLAuthMethod{method("c", false), method("b", true)})
	must.ErrorContains(t, err, "default ACL auth method already exists: a")
	got, err := s.ACLAuthMethodByName(nil, "c")
	must.NoError(t, err)
	must.Nil(t, got)

	// An update keeps the creation index.
	must.NoError(t, s.UpsertACLAuthMethods(7, []*structs.ACLAuthMethod{method("a", false)}))
	a, err := s.ACLAuthMethodByName(nil, "a")
	must.NoError(t, err)
	must.Eq(t, 5, a.CreateIndex)
	must.Eq(t, 7, a.ModifyIndex)

	// A rule needs its method; deleting the method deletes its rules.
	err = s.UpsertACLBindingRules(8, []*structs.ACLBindingRule{{ID: "r0", AuthMethod: "zzz", BindType: "management"}})
	must.ErrorContains(t, err, `ACL auth method "zzz" not found`)
	must.NoError(t, s.UpsertACLBindingRules(8, []*structs.ACLBindingRule{
		{ID: "r1", AuthMethod: "a", BindType: "management"}, {ID: "r2", AuthMethod: "b", BindType: "management"}}))
	must.NoError(t, s.DeleteACLAuthMethods(9, []string{"a"}))
	rules, err := s.ACLBindingRules(nil, "")
	must.NoError(t, err)
	must.Len(t, 1, rules)
	must.Eq(t, "r2", rules[0].ID)
	idx, err := s.Index(TableACLBindingRules)
	must.NoError(t, err)
	must.Eq(t, 9, idx)

	must.ErrorContains(t, s.DeleteACLAuthMethods(10, []string{"a"}), `ACL auth method "a" not found`)
	must.ErrorContains(t, s.DeleteACLBindingRules(10, []string{"r1"}), "ACL binding rule r1 not found")
}
