package auth

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/go-bexpr"
	"github.com/hashicorp/hil"
	"github.com/hashicorp/hil/ast"

	"github.com/nomadq/nomadq/structs"
)

// Bindings is what a login grants: management, or roles and policies.
type Bindings struct {
	Management bool
	Roles      []*structs.ACLTokenRoleLink
	Policies   []string
}

// None reports whether the login grants nothing.
func (b *Bindings) None() bool {
	return !b.Management && len(b.Roles) == 0 && len(b.Policies) == 0
}

// Lookup finds the roles and policies binding rules name; nil when absent.
type Lookup interface {
	ACLRoleByName(name string) (*structs.ACLRole, error)
	ACLPolicyByName(name string) (*structs.ACLPolicy, error)
}

var (
	validBindPolicyName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")
	validBindRoleName   = regexp.MustCompile("^[a-zA-Z0-9-]{1,256}$")
)

// Bind evaluates the method's rules against the login's claims. A rule
// whose selector matches (an empty selector matches every login) binds
// the role or policy its BindName names after interpolating
// ${value.<name>} from the claims (lower-cased, as Nomad does); a role or
// policy that does not exist binds nothing. A matching management rule
// makes the token a management token.
func Bind(rules []*structs.ACLBindingRule, claims *structs.ACLAuthClaims, mappings map[string]string, lookup Lookup) (*Bindings, error) {
	vars := map[string]string{}
	for _, target := range mappings {
		vars["value."+target] = ""
	}
	for k, v := range claims.Value {
		vars["value."+k] = strings.ToLower(v)
	}
	var out Bindings
	seenRole, seenPolicy := map[string]bool{}, map[string]bool{}
	for _, rule := range rules {
		if !selectorMatches(rule.Selector, claims) {
			continue
		}
		if rule.BindType == structs.ACLBindingRuleBindTypeManagement {
			return &Bindings{Management: true}, nil
		}
		name, err := Interpolate(rule.BindName, vars)
		if err != nil {
			return nil, fmt.Errorf("binding rule %s: cannot compute %q bind name: %w", rule.ID, rule.BindType, err)
		}
		switch rule.BindType {
		case structs.ACLBindingRuleBindTypeRole:
			if !validBindRoleName.MatchString(name) {
				return nil, fmt.Errorf("binding rule %s: computed role name %q is invalid", rule.ID, name)
			}
			role, err := lookup.ACLRoleByName(name)
			if err != nil {
				return nil, err
			}
			if role != nil && !seenRole[role.ID] {
				seenRole[role.ID] = true
				out.Roles = append(out.Roles, &structs.ACLTokenRoleLink{ID: role.ID, Name: role.Name})
			}
		case structs.ACLBindingRuleBindTypePolicy:
			if !validBindPolicyName.MatchString(name) {
				return nil, fmt.Errorf("binding rule %s: computed policy name %q is invalid", rule.ID, name)
			}
			policy, err := lookup.ACLPolicyByName(name)
			if err != nil {
				return nil, err
			}
			if policy != nil && !seenPolicy[policy.Name] {
				seenPolicy[policy.Name] = true
				out.Policies = append(out.Policies, policy.Name)
			}
		default:
			return nil, fmt.Errorf("binding rule %s: unknown bind type %q", rule.ID, rule.BindType)
		}
	}
	return &out, nil
}

// selectorMatches evaluates a go-bexpr selector; one that fails to parse
// or evaluate matches nothing.
func selectorMatches(selector string, claims *structs.ACLAuthClaims) bool {
	if selector == "" {
		return true
	}
	eval, err := bexpr.CreateEvaluator(selector)
	if err != nil {
		return false
	}
	ok, err := eval.Evaluate(claims)
	return err == nil && ok
}

// Interpolate expands HIL ${...} expressions in s with vars.
func Interpolate(s string, vars map[string]string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	tree, err := hil.Parse(s)
	if err != nil {
		return "", err
	}
	vm := make(map[string]ast.Variable, len(vars))
	for k, v := range vars {
		vm[k] = ast.Variable{Type: ast.TypeString, Value: v}
	}
	res, err := hil.Eval(tree, &hil.EvalConfig{GlobalScope: &ast.BasicScope{VarMap: vm}})
	if err != nil {
		return "", err
	}
	str, ok := res.Value.(string)
	if res.Type != hil.TypeString || !ok {
		return "", fmt.Errorf("expression %q does not give a string", s)
	}
	return str, nil
}

// TokenName renders a method's TokenNameFormat for one login: it may use
// ${auth_method_type}, ${auth_method_name} and ${value.<name>} for each
// name of the method's ClaimMappings.
func TokenName(m *structs.ACLAuthMethod, claims *structs.ACLAuthClaims) (string, error) {
	vars := map[string]string{"auth_method_type": m.Type, "auth_method_name": m.Name}
	// Every mapped claim is a variable, empty when the token lacks it.
	if m.Config != nil {
		for _, target := range m.Config.ClaimMappings {
			vars["value."+target] = ""
		}
	}
	for k, v := range claims.Value {
		vars["value."+k] = v
	}
	format := m.TokenNameFormat
	if format == "" {
		format = structs.DefaultACLAuthMethodTokenNameFormat
	}
	name, err := Interpolate(format, vars)
	if err != nil {
		return "", fmt.Errorf("failed to generate ACL token name from TokenNameFormat %q: %w", format, err)
	}
	return name, nil
}
