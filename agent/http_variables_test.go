package agent

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

func TestVariablesHTTP(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	vars := c.Variables()

	_, err := c.Namespaces().Register(&api.Namespace{Name: "prod"}, nil)
	must.NoError(t, err)
	created, _, err := vars.Create(&api.Variable{Path: "app/db", Namespace: "prod", Items: api.VariableItems{"k": "v"}}, nil)
	must.NoError(t, err)
	must.Eq(t, "prod", created.Namespace)

	// Namespaces keep variables apart.
	_, _, err = vars.Read("app/db", nil)
	must.ErrorIs(t, err, api.ErrVariablePathNotFound)
	got, _, err := vars.Read("app/db", &api.QueryOptions{Namespace: "prod"})
	must.NoError(t, err)
	must.Eq(t, created, got)
	all, _, err := vars.List(&api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)
	must.SliceLen(t, 1, all)

	// A conflicting write answers 409 with the stored variable.
	stale := created.Copy()
	stale.ModifyIndex = 1
	_, _, err = vars.CheckedUpdate(stale, &api.WriteOptions{Namespace: "prod"})
	var cas api.ErrCASConflict
	must.True(t, errors.As(err, &cas))
	must.Eq(t, created, cas.Conflict)

	// A locked variable is its holder's: others get the conflict.
	locked, _, err := vars.AcquireLock(&api.Variable{Path: "app/lock", Items: api.VariableItems{"a": "b"}, Lock: &api.VariableLock{TTL: "30s"}}, nil)
	must.NoError(t, err)
	must.Eq(t, "30s", locked.Lock.TTL)
	must.Eq(t, "15s", locked.Lock.LockDelay)
	_, _, err = vars.CheckedUpdate(&api.Variable{Path: "app/lock", ModifyIndex: locked.ModifyIndex, Items: api.VariableItems{"x": "y"}}, nil)
	must.True(t, errors.As(err, &cas))

	cases := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody                 string
	}{
		{"no items", "PUT", "/v1/var/a", `{"Items":{}}`, 400, "variable missing required Items object"},
		{"two lock operations", "PUT", "/v1/var/a?lock-acquire&lock-release", `{}`, 400, "multiple lock operations"},
		{"cas with a lock operation", "PUT", "/v1/var/a?lock-acquire&cas=3", `{}`, 400, "CAS can't be used with lock operations"},
		{"bad cas", "PUT", "/v1/var/a?cas=x", `{"Items":{"a":"b"}}`, 400, "can not parse cas"},
		{"bad TTL", "PUT", "/v1/var/a?lock-acquire", `{"Lock":{"TTL":"soon"}}`, 400, `Lock.TTL: "soon" is not a duration`},
		{"renew someone else's lock", "PUT", "/v1/var/app/lock?lock-renew", `{"Lock":{"ID":"nope"}}`, 409, `is not locked by lock "nope"`},
		{"wildcard namespace read", "GET", "/v1/var/app/db?namespace=*", ``, 400, "wildcard"},
		{"missing path", "GET", "/v1/var/", ``, 404, ""},
		{"bad method", "PATCH", "/v1/var/a", ``, 400, "Invalid method"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, a.HTTPAddr()+tc.path, strings.NewReader(tc.body))
			must.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			must.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			must.Eq(t, tc.wantCode, resp.StatusCode, must.Sprint(string(body)))
			must.StrContains(t, string(body), tc.wantBody)
		})
	}
}
