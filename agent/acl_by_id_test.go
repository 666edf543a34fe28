package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// byIDObjects are the IDs of what scopeAgentIn made in one namespace.
type byIDObjects struct {
	alloc, eval, job, queued, policy, variable string
}

// byIDRoute is one read (or act) by ID: path is a template whose {alloc},
// {eval}, {job}, {queued}, {policy} and {var} take the object's IDs, or a
// missing object's. found marks the routes that answer 200 with the
// object to a caller that may read it; write marks the routes that
// change what they name, called only with tokens that may not.
type byIDRoute struct {
	method, path string
	found, write bool
}

var byIDRoutes = []byIDRoute{
	{"GET", "/v1/allocation/{alloc}", true, false},
	{"POST", "/v1/allocation/{alloc}/stop", false, true},
	{"GET", "/v1/evaluation/{eval}", true, false},
	{"GET", "/v1/evaluation/{eval}?related=true", true, false},
	{"GET", "/v1/evaluation/{eval}/allocations", true, false},
	{"GET", "/v1/job/{job}", true, false},
	{"GET", "/v1/job/{job}/versions", true, false},
	{"GET", "/v1/job/{job}/allocations", true, false},
	{"GET", "/v1/job/{job}/evaluations", true, false},
	{"GET", "/v1/job/{job}/summary", true, false},
	{"GET", "/v1/job/{job}/scale", true, false},
	{"GET", "/v1/job/{job}/submission?version=0", false, false},
	{"GET", "/v1/job/{job}/deployments", false, false},
	{"GET", "/v1/job/{job}/deployment", false, false},
	{"GET", "/v1/scaling/policy/{policy}", true, false},
	{"GET", "/v1/var/{var}", true, false},
	{"GET", "/v1/queue/jobs?job_id={queued}", true, false},
	{"GET", "/v1/deployment/{alloc}", false, false},
	{"GET", "/v1/client/allocation/{alloc}/stats", true, false},
	{"GET", "/v1/client/allocation/{alloc}/checks", true, false},
	{"GET", "/v1/client/allocation/{alloc}/exec?task=t&command=x", false, false},
	{"POST", "/v1/client/allocation/{alloc}/restart", false, true},
	{"POST", "/v1/client/allocation/{alloc}/signal", false, true},
	{"GET", "/v1/client/fs/logs/{alloc}?task=t&type=stdout&plain=true", false, false},
	{"GET", "/v1/client/fs/ls/{alloc}?path=/", false, false},
	{"GET", "/v1/client/fs/stat/{alloc}?path=/", false, false},
	{"GET", "/v1/client/fs/cat/{alloc}?path=alloc/logs/t.stdout.0", false, false},
	{"GET", "/v1/client/fs/readat/{alloc}?path=alloc/logs/t.stdout.0&offset=0&limit=1", false, false},
}

// fill puts the objects' IDs into a route's path, with namespace appended
// as a query parameter unless it is "-".
func (rt byIDRoute) fill(o byIDObjects, namespace string) string {
	p := strings.NewReplacer("{alloc}", o.alloc, "{eval}", o.eval, "{job}", o.job,
		"{queued}", o.queued, "{policy}", o.policy, "{var}", o.variable).Replace(rt.path)
	if namespace == "-" {
		return p
	}
	sep := "?"
	if strings.Contains(p, "?") {
		sep = "&"
	}
	return p + sep + "namespace=" + namespace
}

// byIDAnswer is what a route answered: status and body.
type byIDAnswer struct {
	code int
	body string
}

func byIDCall(t *testing.T, a *Agent, method, path, token string) byIDAnswer {
	t.Helper()
	code, body := aclCall(t, a, method, path, token, "{}")
	return byIDAnswer{code, body}
}

// TestACL_ReadsByIDAuthorizeTheObjectsNamespace: every read of an object
// by its ID (and every act on one) is authorized against the object's own
// namespace, whatever namespace the request names or leaves out. A token
// that may read only "default" gets, for an object of "other", exactly
// the answer it gets for an object that does not exist (so a refusal does
// not tell the object exists), never the object. The anonymous caller
// (no anonymous policy) gets that answer for both namespaces, and the
// management token the objects of both.
func TestACL_ReadsByIDAuthorizeTheObjectsNamespace(t *testing.T) {
	a, root := scopeAgentIn(t, structs.DefaultNamespace, "other")
	objects := map[string]byIDObjects{}
	for _, ns := range []string{structs.DefaultNamespace, "other"} {
		q := &api.QueryOptions{Namespace: ns}
		allocs, _, err := root.Jobs().Allocations("svc-"+ns, false, q)
		must.NoError(t, err)
		must.Len(t, 1, allocs)
		policies, _, err := root.Scaling().ListPolicies(q)
		must.NoError(t, err)
		must.Len(t, 1, policies)
		objects[ns] = byIDObjects{
			alloc: allocs[0].ID, eval: allocs[0].EvalID, job: "svc-" + ns, queued: "q-" + ns,
			policy: policies[0].ID, variable: "app/" + ns,
		}
	}
	missing := byIDObjects{
		alloc: structs.GenerateUUID(), eval: structs.GenerateUUID(), job: "svc-nosuch", queued: "q-nosuch",
		policy: structs.GenerateUUID(), variable: "app/nosuch",
	}
	reader := tokenClient(t, a, root, "read-default", `
namespace "default" {
  policy = "read"
  variables {
    path "*" { capabilities = ["read", "list"] }
  }
}`)
	secretOf := func(c *api.Client) string {
		tok, _, err := c.ACLTokens().Self(nil)
		must.NoError(t, err)
		return tok.SecretID
	}
	tokens := map[string]string{"management": secretOf(root), "read-default": secretOf(reader), "anonymous": ""}
	canRead := func(token, ns string) bool {
		return token == "management" || token == "read-default" && ns == structs.DefaultNamespace
	}

	for _, rt := range byIDRoutes {
		for tokenName, secret := range tokens {
			for objNS, obj := range objects {
				for _, reqNS := range []string{"-", structs.DefaultNamespace, "other", "*"} {
					name := rt.method + " " + rt.path + " " + tokenName + " object in " + objNS + " namespace=" + reqNS
					if canRead(tokenName, objNS) {
						if rt.write {
							continue // it would act on an object the token may act on
						}
						got := byIDCall(t, a, rt.method, rt.fill(obj, reqNS), secret)
						must.Less(t, 500, got.code, must.Sprintf("%s: %d %s", name, got.code, got.body))
						if rt.found && reqNS == objNS {
							must.Eq(t, http.StatusOK, got.code, must.Sprintf("%s: %s", name, got.body))
						}
						continue
					}
					got := byIDCall(t, a, rt.method, rt.fill(obj, reqNS), secret)
					none := byIDCall(t, a, rt.method, rt.fill(missing, reqNS), secret)
					// The answer for a missing object names the ID asked
					// for, as the one for a real object may: compare them
					// with the IDs swapped.
					want := strings.NewReplacer(missing.alloc, obj.alloc, missing.eval, obj.eval, missing.job, obj.job,
						missing.queued, obj.queued, missing.policy, obj.policy, missing.variable, obj.variable).Replace(none.body)
					must.Eq(t, none.code, got.code, must.Sprintf("%s: %q, missing object: %q", name, got.body, none.body))
					must.Eq(t, want, got.body, must.Sprintf("%s", name))
					// And nothing of the object itself: its namespace's
					// name never appears in a body (the missing object's
					// answer, when it echoes the request, may name the
					// request's own namespace).
					if !strings.Contains(none.body, objNS) {
						must.StrNotContains(t, got.body, `"`+objNS+`"`, must.Sprint(name))
					}
				}
			}
		}
	}

	// The refused acts changed nothing: the allocs still run.
	for ns, obj := range objects {
		alloc, _, err := root.Allocations().Info(obj.alloc, &api.QueryOptions{Namespace: ns})
		must.NoError(t, err)
		must.Eq(t, structs.AllocDesiredStatusRun, alloc.DesiredStatus, must.Sprint(ns))
	}
}
