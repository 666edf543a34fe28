package nomad

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestACL_ForwardedRPCsAuthorizeInForward keeps forwardedRPCs equal to the
// methods whose endpoint calls forward (directly, or through the queue's
// read), each with its own method name: a method listed there is
// authorized only by forward, so one whose endpoint did not call it would
// go unchecked.
func TestACL_ForwardedRPCsAuthorizeInForward(t *testing.T) {
	files, err := filepath.Glob("*.go")
	must.NoError(t, err)
	found := map[string]bool{}
	var misnamed []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		must.NoError(t, err)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "forward" && sel.Sel.Name != "read" {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				method, _ := strconv.Unquote(lit.Value)
				if _, name, ok := strings.Cut(method, "."); ok {
					found[method] = true
					if name != fn.Name.Name {
						misnamed = append(misnamed, method+" in "+fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	var missing, extra []string
	for m := range found {
		if !forwardedRPCs[m] {
			missing = append(missing, m)
		}
	}
	for m := range forwardedRPCs {
		if !found[m] {
			extra = append(extra, m)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	must.Eq(t, []string(nil), missing, must.Sprint("endpoints that call forward but are not in forwardedRPCs"))
	must.Eq(t, []string(nil), extra, must.Sprint("forwardedRPCs entries whose endpoint does not call forward: they would go unchecked"))
	must.Eq(t, []string(nil), misnamed, must.Sprint("forward called with another method's name"))
}

// TestACL_ForwardedCallsAreAuthorizedWhereAnswered: a call through a
// follower is authorized once, by the leader that answers it, against the
// leader's state. The follower's state is made to lag by writing a token
// into one server's store only: a token the leader knows works through a
// follower that does not know it yet, one the leader no longer knows is
// refused through a follower that still has it, and a stale read, which
// the follower answers itself, follows the follower's state.
func TestACL_ForwardedCallsAreAuthorizedWhereAnswered(t *testing.T) {
	acls := func(c *Config) { c.ACLEnabled = true }
	both := func(a, b func(*Config)) func(*Config) { return func(c *Config) { a(c); b(c) } }
	s1 := testServer(t, both(clusterConfig(t, 3, nil), acls))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, both(clusterConfig(t, 3, join), acls))
	s3 := testServer(t, both(clusterConfig(t, 3, join), acls))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}
	root := bootstrap(t, leader)
	waitForIndex(t, follower, root.CreateIndex)

	// onlyOn stores a management token in one server's state alone.
	onlyOn := func(s *Server) string {
		t.Helper()
		latest, err := s.State().LatestIndex()
		must.NoError(t, err)
		tok := &structs.ACLToken{AccessorID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Type: structs.ACLManagementToken}
		must.NoError(t, s.State().UpsertACLTokens(latest+1, []*structs.ACLToken{tok}))
		return tok.SecretID
	}
	list := func(s *Server, secret string, stale bool) error {
		args := &structs.JobListRequest{QueryOptions: structs.QueryOptions{Region: "global", Namespace: "default", AuthToken: secret, AllowStale: stale}}
		return s.RPC("Job.List", args, &structs.JobListResponse{})
	}

	created := onlyOn(leader)
	must.NoError(t, list(follower, created, false), must.Sprint("the leader knows the token: the follower must not refuse it first"))
	must.ErrorContains(t, list(follower, created, true), "ACL token not found", must.Sprint("a stale read is authorized by the follower that answers it"))

	revoked := onlyOn(follower)
	must.ErrorContains(t, list(follower, revoked, false), "ACL token not found", must.Sprint("the leader no longer knows the token"))
	must.NoError(t, list(follower, revoked, true))

	must.ErrorContains(t, list(follower, "", false), "Permission denied")
	must.NoError(t, list(follower, root.SecretID, false))
}
