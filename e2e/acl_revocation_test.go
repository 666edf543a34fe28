package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// startACLServers starts three server agents with ACLs on.
func startACLServers(t *testing.T, ports []int) []*agentProc {
	var joinAddr []string
	for i := range 3 {
		joinAddr = append(joinAddr, fmt.Sprintf("127.0.0.1:%d", ports[3*i+2]))
	}
	var agents []*agentProc
	for i := range 3 {
		spec := agentSpec{
			name: fmt.Sprintf("acl-server-%d", i), server: true, expect: 3, join: joinAddr,
			dataDir: t.TempDir(), http: ports[3*i], rpc: ports[3*i+1], serf: ports[3*i+2],
		}
		cfgPath := filepath.Join(t.TempDir(), spec.name+".hcl")
		must.NoError(t, os.WriteFile(cfgPath, []byte(spec.hcl()+"acl {\n  enabled = true\n}\n"), 0o600))
		a := &agentProc{
			name: spec.name, config: cfgPath, dataDir: spec.dataDir,
			http: fmt.Sprintf("http://127.0.0.1:%d", spec.http), rpc: fmt.Sprintf("127.0.0.1:%d", spec.rpc), serf: spec.serf,
		}
		a.start(t)
		agents = append(agents, a)
	}
	return agents
}

// TestACL_TokensTakeEffectAtOnceOnEveryServer: on a three-server cluster,
// a token works through every server as soon as its creation returned
// (calls are authorized by the leader that answers them), and once
// deleted (through any server) it is refused by every server at once, and
// the event stream it had open on each server ends.
func TestACL_TokensTakeEffectAtOnceOnEveryServer(t *testing.T) {
	agents := startACLServers(t, freePorts(t, 9))
	waitLeader(t, agents)
	root := agents[0].api(t)
	var boot *api.ACLToken
	waitFor(t, 30*time.Second, func() error {
		var err error
		boot, _, err = root.ACLTokens().Bootstrap(nil)
		return err
	})
	root.SetSecretID(boot.SecretID)
	_, err := root.ACLPolicies().Upsert(&api.ACLPolicy{Name: "reader", Rules: `namespace "default" { policy = "read" }`}, nil)
	must.NoError(t, err)

	as := func(a *agentProc, secret string) *api.Client {
		c := a.api(t)
		c.SetSecretID(secret)
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for round := range 5 {
		admin := as(agents[round%3], boot.SecretID)
		tok, _, err := admin.ACLTokens().Create(&api.ACLToken{Name: fmt.Sprintf("r%d", round), Type: "client", Policies: []string{"reader"}}, nil)
		must.NoError(t, err)
		var streams []<-chan *api.Events
		for _, a := range agents {
			_, _, err := as(a, tok.SecretID).Jobs().List(nil)
			must.NoError(t, err, must.Sprintf("round %d: a new token through %s", round, a.name))
			// A stream is served from the serving server's own state,
			// which may not hold the token for a moment yet.
			var s <-chan *api.Events
			waitFor(t, 10*time.Second, func() error {
				var err error
				s, err = as(a, tok.SecretID).EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, nil)
				return err
			})
			streams = append(streams, s)
		}

		_, err = as(agents[(round+1)%3], boot.SecretID).ACLTokens().Delete(tok.AccessorID, nil)
		must.NoError(t, err)
		for _, a := range agents {
			_, _, err := as(a, tok.SecretID).Jobs().List(nil)
			must.ErrorContains(t, err, "403", must.Sprintf("round %d: a deleted token through %s", round, a.name))
		}
		for i, s := range streams {
			ended := false
			timeout := time.After(10 * time.Second)
			for !ended {
				select {
				case batch, ok := <-s:
					ended = !ok || batch.Err != nil
				case <-timeout:
					t.Fatalf("round %d: the stream on %s is still open after the token's deletion", round, agents[i].name)
				}
			}
		}
	}
}
