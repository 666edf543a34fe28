package agent

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// aclCall sends a request with token ("" for none) and body ("" for
// none) and returns the status and the body of the answer.
func aclCall(t *testing.T, a *Agent, method, path, token, body string) (int, string) {
	t.Helper()
	resp := doRawAs(t, a, method, path, token, body)
	return resp.StatusCode, readBody(t, resp)
}

// namesIn decodes a JSON listing and returns the field key of each entry,
// sorted.
func namesIn(t *testing.T, body, key string) []string {
	t.Helper()
	var list []map[string]any
	must.NoError(t, json.Unmarshal([]byte(body), &list), must.Sprint(body))
	out := []string{}
	for _, e := range list {
		out = append(out, e[key].(string))
	}
	sort.Strings(out)
	return out
}

// TestACL_ReadsShowOnlyWhatTheCallerLinks: with ACLs on, the ACL listings
// and reads by name show a caller without a management token only the
// policies and roles its token links (directly or through its roles), as
// Nomad does; the anonymous caller links the policy named "anonymous",
// so it lists nothing until that policy exists and then that one only.
// Tokens and binding rules stay management only; auth methods are listed
// to anyone, as in Nomad.
func TestACL_ReadsShowOnlyWhatTheCallerLinks(t *testing.T) {
	a, c, root := aclAgent(t)
	for _, p := range []string{"reader", "ops", "secret"} {
		_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: p, Description: p + " policy", Rules: `namespace "default" { policy = "read" }`}, nil)
		must.NoError(t, err)
	}
	role, _, err := c.ACLRoles().Create(&api.ACLRole{Name: "operators", Policies: []*api.ACLRolePolicyLink{{Name: "ops"}}}, nil)
	must.NoError(t, err)
	other, _, err := c.ACLRoles().Create(&api.ACLRole{Name: "others", Policies: []*api.ACLRolePolicyLink{{Name: "secret"}}}, nil)
	must.NoError(t, err)
	tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: "r", Type: "client", Policies: []string{"reader"},
		Roles: []*api.ACLTokenRoleLink{{Name: "operators"}}}, nil)
	must.NoError(t, err)

	anon := apiClient(t, a)
	client := apiClient(t, a)
	client.SetSecretID(tok.SecretID)

	// Policies: anonymous sees none while there is no anonymous policy.
	list, _, err := anon.ACLPolicies().List(nil)
	must.NoError(t, err)
	must.Len(t, 0, list, must.Sprint("an anonymous caller must not list other policies"))
	code, body := aclCall(t, a, http.MethodGet, "/v1/acl/policies", "", "")
	must.Eq(t, http.StatusOK, code)
	must.Eq(t, "[]", strings.TrimSpace(body))

	_, err = c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "anonymous", Rules: `namespace "default" { policy = "read" }`}, nil)
	must.NoError(t, err)
	code, body = aclCall(t, a, http.MethodGet, "/v1/acl/policies", "", "")
	must.Eq(t, http.StatusOK, code)
	must.Eq(t, []string{"anonymous"}, namesIn(t, body, "Name"))

	// The client token lists its own policy and its role's, no more.
	code, body = aclCall(t, a, http.MethodGet, "/v1/acl/policies", tok.SecretID, "")
	must.Eq(t, http.StatusOK, code)
	must.Eq(t, []string{"ops", "reader"}, namesIn(t, body, "Name"))
	code, body = aclCall(t, a, http.MethodGet, "/v1/acl/policies", root.SecretID, "")
	must.Eq(t, http.StatusOK, code)
	must.Eq(t, []string{"anonymous", "ops", "reader", "secret"}, namesIn(t, body, "Name"))

	// Reads by name: what the caller links, and the anonymous policy to
	// anyone (it applies to every caller without a token); others 403.
	for _, tc := range []struct {
		who, token, policy string
		want               int
	}{
		{"anonymous", "", "anonymous", http.StatusOK},
		{"anonymous", "", "reader", http.StatusForbidden},
		{"anonymous", "", "secret", http.StatusForbidden},
		{"anonymous", "", "missing", http.StatusForbidden},
		{"client", tok.SecretID, "reader", http.StatusOK},
		{"client", tok.SecretID, "ops", http.StatusOK},
		{"client", tok.SecretID, "anonymous", http.StatusOK},
		{"client", tok.SecretID, "secret", http.StatusForbidden},
		{"management", root.SecretID, "secret", http.StatusOK},
		{"management", root.SecretID, "missing", http.StatusNotFound},
	} {
		code, body := aclCall(t, a, http.MethodGet, "/v1/acl/policy/"+tc.policy, tc.token, "")
		must.Eq(t, tc.want, code, must.Sprintf("%s reads policy %q: %s", tc.who, tc.policy, body))
		if code == http.StatusForbidden {
			must.StrContains(t, body, "Permission denied")
			must.StrNotContains(t, body, "policy", must.Sprint("a refusal must not show the policy"))
		}
	}

	// Roles: the client token lists and reads the role it links only;
	// the anonymous caller links none.
	code, body = aclCall(t, a, http.MethodGet, "/v1/acl/roles", tok.SecretID, "")
	must.Eq(t, http.StatusOK, code)
	must.Eq(t, []string{"operators"}, namesIn(t, body, "Name"))
	code, body = aclCall(t, a, http.MethodGet, "/v1/acl/roles", root.SecretID, "")
	must.Eq(t, http.StatusOK, code)
	must.Eq(t, []string{"operators", "others"}, namesIn(t, body, "Name"))
	for _, tc := range []struct {
		who, token, path string
		want             int
	}{
		{"client", tok.SecretID, "/v1/acl/role/" + role.ID, http.StatusOK},
		{"client", tok.SecretID, "/v1/acl/role/name/operators", http.StatusOK},
		{"client", tok.SecretID, "/v1/acl/role/" + other.ID, http.StatusForbidden},
		{"client", tok.SecretID, "/v1/acl/role/name/others", http.StatusForbidden},
		{"client", tok.SecretID, "/v1/acl/role/name/missing", http.StatusForbidden},
		{"anonymous", "", "/v1/acl/role/" + role.ID, http.StatusForbidden},
		{"anonymous", "", "/v1/acl/role/name/operators", http.StatusForbidden},
		{"management", root.SecretID, "/v1/acl/role/name/others", http.StatusOK},
		{"management", root.SecretID, "/v1/acl/role/name/missing", http.StatusNotFound},
	} {
		code, body := aclCall(t, a, http.MethodGet, tc.path, tc.token, "")
		must.Eq(t, tc.want, code, must.Sprintf("%s GET %s: %s", tc.who, tc.path, body))
	}

	// Every ACL listing, anonymous: only what the anonymous caller may
	// see, or a refusal.
	_, _, err = c.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "ci", Type: "JWT", TokenLocality: "local", MaxTokenTTL: time.Hour,
		Config: &api.ACLAuthMethodConfig{JWKSURL: "https://ci.example/jwks"}}, nil)
	must.NoError(t, err)
	_, _, err = c.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: "ci", BindType: "policy", BindName: "secret"}, nil)
	must.NoError(t, err)
	for _, tc := range []struct {
		path  string
		want  int
		names []string // of a 200 listing
		key   string
	}{
		{"/v1/acl/policies", http.StatusOK, []string{"anonymous"}, "Name"},
		{"/v1/acl/roles", http.StatusOK, []string{}, "Name"},
		{"/v1/acl/tokens", http.StatusForbidden, nil, ""},
		{"/v1/acl/binding-rules", http.StatusForbidden, nil, ""},
		{"/v1/acl/auth-methods", http.StatusOK, []string{"ci"}, "Name"},
	} {
		code, body := aclCall(t, a, http.MethodGet, tc.path, "", "")
		must.Eq(t, tc.want, code, must.Sprintf("anonymous GET %s: %s", tc.path, body))
		if tc.want == http.StatusOK {
			must.Eq(t, tc.names, namesIn(t, body, tc.key), must.Sprintf("anonymous GET %s", tc.path))
		}
		for _, secret := range []string{root.SecretID, tok.SecretID} {
			must.StrNotContains(t, body, secret)
		}
	}
}
