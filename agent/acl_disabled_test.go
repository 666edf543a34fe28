package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestACL_DisabledRoutesAnswer400: with ACLs off, every ACL route answers
// 400 "ACL support disabled" as Nomad does: the request asks for what the
// cluster is not configured to do, which is no server failure.
func TestACL_DisabledRoutesAnswer400(t *testing.T) {
	a := NewTestAgent(t, nil)
	const id = "5e4c2a1b-0000-4000-8000-000000000000"
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "/v1/acl/bootstrap", ""},
		{"GET", "/v1/acl/policies", ""},
		{"GET", "/v1/acl/policy/p", ""},
		{"PUT", "/v1/acl/policy/p", `{"Name": "p", "Rules": "namespace \"default\" { policy = \"read\" }"}`},
		{"DELETE", "/v1/acl/policy/p", ""},
		{"GET", "/v1/acl/tokens", ""},
		{"PUT", "/v1/acl/token", `{"Name": "t", "Type": "client", "Policies": ["p"]}`},
		{"GET", "/v1/acl/token/self", ""},
		{"GET", "/v1/acl/token/" + id, ""},
		{"PUT", "/v1/acl/token/" + id, `{"Name": "t", "Type": "client", "Policies": ["p"]}`},
		{"DELETE", "/v1/acl/token/" + id, ""},
		{"PUT", "/v1/acl/token/onetime", ""},
		{"PUT", "/v1/acl/token/onetime/exchange", `{"OneTimeSecretID": "` + id + `"}`},
		{"GET", "/v1/acl/roles", ""},
		{"PUT", "/v1/acl/role", `{"Name": "r", "Policies": [{"Name": "p"}]}`},
		{"GET", "/v1/acl/role/" + id, ""},
		{"GET", "/v1/acl/role/name/r", ""},
		{"PUT", "/v1/acl/role/" + id, `{"ID": "` + id + `", "Name": "r", "Policies": [{"Name": "p"}]}`},
		{"DELETE", "/v1/acl/role/" + id, ""},
		{"GET", "/v1/acl/auth-methods", ""},
		{"PUT", "/v1/acl/auth-method", `{"Name": "m", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h", "Config": {"JWKSURL": "https://ci.example/jwks"}}`},
		{"GET", "/v1/acl/auth-method/m", ""},
		{"DELETE", "/v1/acl/auth-method/m", ""},
		{"GET", "/v1/acl/binding-rules", ""},
		{"PUT", "/v1/acl/binding-rule", `{"AuthMethod": "m", "BindType": "policy", "BindName": "p"}`},
		{"GET", "/v1/acl/binding-rule/" + id, ""},
		{"DELETE", "/v1/acl/binding-rule/" + id, ""},
		{"PUT", "/v1/acl/login", `{"AuthMethodName": "m", "LoginToken": "x.y.z"}`},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			code, body := aclCall(t, a, tc.method, tc.path, "", tc.body)
			must.Eq(t, http.StatusBadRequest, code, must.Sprint(body))
			must.Eq(t, "ACL support disabled", strings.TrimSpace(body))
		})
	}

	// The official client sees the same.
	_, _, err := apiClient(t, a).ACLTokens().Bootstrap(nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "ACL support disabled")
}
