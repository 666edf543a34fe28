package client

import (
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/depstest"
)

// TestDeps_ClientDoesNotLinkTheServer keeps the client's build free of the
// server: it reaches servers through msgpackrpc only, so a client binary
// carries no Raft, no state store and no scheduler.
func TestDeps_ClientDoesNotLinkTheServer(t *testing.T) {
	// Run from this package's directory, so ./... is the client's tree.
	// Without -test: tests may start a server, the client must not.
	deps := depstest.Deps(t, false, "./...")
	must.SliceContains(t, deps, "github.com/nomadq/nomadq/msgpackrpc", must.Sprint("the listing should include the shared RPC package"))

	forbidden := []struct {
		pkg string // the package and everything below it
		why string
		// except are packages below pkg the client may link.
		except []string
	}{
		{pkg: "github.com/nomadq/nomadq/nomad", why: "the server"},
		{pkg: "github.com/nomadq/nomadq/scheduler", why: "the scheduler"},
		{pkg: "github.com/nomadq/nomadq/state", why: "the server's state store"},
		{pkg: "github.com/hashicorp/raft", why: "Raft"},
		{pkg: "github.com/hashicorp/go-memdb", why: "the state store's database"},
		// consul-template (the template renderer) links Consul's api
		// client, whose types use serf's network coordinates: a data
		// type with no networking, not membership.
		{pkg: "github.com/hashicorp/serf", why: "server membership", except: []string{"github.com/hashicorp/serf/coordinate"}},
	}
	for _, f := range forbidden {
		t.Run(f.pkg, func(t *testing.T) {
			for _, d := range deps {
				if slices.Contains(f.except, d) {
					continue
				}
				if depstest.Within(d, f.pkg) {
					t.Errorf("./client/... depends on %s (%s)", d, f.why)
				}
			}
		})
	}
}
