package agent

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// With ACLs on, variables follow the token's variable paths and the event
// stream its namespace and node capabilities, as in Nomad.
func TestACL_VariablesAndEventStream(t *testing.T) {
	a, root, _ := aclAgent(t)
	for _, p := range []*api.Variable{
		{Path: "app/db", Items: api.VariableItems{"k": "v"}},
		{Path: "ops/secret", Items: api.VariableItems{"k": "v"}},
	} {
		_, _, err := root.Variables().Create(p, nil)
		must.NoError(t, err)
	}
	_, err := root.ACLPolicies().Upsert(&api.ACLPolicy{Name: "app-reader", Rules: `
namespace "default" {
  policy = "read"
  variables {
    path "app/*" {
      capabilities = ["read"]
    }
  }
}`}, nil)
	must.NoError(t, err)
	tok, _, err := root.ACLTokens().Create(&api.ACLToken{Type: "client", Policies: []string{"app-reader"}}, nil)
	must.NoError(t, err)
	c := apiClient(t, a)
	c.SetSecretID(tok.SecretID)

	got, _, err := c.Variables().Read("app/db", nil)
	must.NoError(t, err)
	must.Eq(t, "v", got.Items["k"])
	_, _, err = c.Variables().Read("ops/secret", nil)
	must.ErrorContains(t, err, "403")
	_, _, err = c.Variables().Create(&api.Variable{Path: "app/new", Items: api.VariableItems{"k": "v"}}, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, err = c.Variables().Delete("app/db", nil)
	must.ErrorContains(t, err, "Permission denied")
	list, _, err := c.Variables().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, list, must.Sprint("only the paths the token may list"))
	must.Eq(t, "app/db", list[0].Path)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, denied := range []map[api.Topic][]string{
		{api.TopicNode: {"*"}},
		{api.TopicAll: {"*"}},
		{api.TopicJob: {"*"}, api.TopicNodePool: {"*"}},
	} {
		_, err := c.EventStream().Stream(ctx, denied, 0, nil)
		must.ErrorContains(t, err, "403", must.Sprintf("topics %v", denied))
	}
	_, err = c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, &api.QueryOptions{Namespace: "*"})
	must.NoError(t, err, must.Sprint("read-job in every namespace there is (only default)"))
	_, err = root.Namespaces().Register(&api.Namespace{Name: "prod"}, nil)
	must.NoError(t, err)
	_, err = c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, &api.QueryOptions{Namespace: "*"})
	must.ErrorContains(t, err, "403", must.Sprint("the token cannot read jobs in prod, which * includes"))
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.Topic("Variable"): {"*"}, api.TopicEvaluation: {"*"}}, 0, nil)
	must.NoError(t, err)
	batch := <-stream
	must.NoError(t, batch.Err)
	must.Eq(t, api.Topic("Variable"), batch.Events[0].Topic)
}
