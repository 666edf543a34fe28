package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// getJWKS reads /.well-known/jwks.json as any OIDC consumer would.
func getJWKS(t *testing.T, a *Agent) jose.JSONWebKeySet {
	t.Helper()
	resp, err := http.Get(a.HTTPAddr() + "/.well-known/jwks.json")
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var set jose.JSONWebKeySet
	must.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
	return set
}

// httpDo sends a request and returns the status and body.
func httpDo(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestKeyringHTTP_ListRotateDeleteAndJWKS(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	// The first leader wrote one key; the JWKS lists it, as the official
	// api test harness waits for.
	keys, qm, err := c.Keyring().List(nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.SliceLen(t, 1, keys)
	first := keys[0]
	must.Eq(t, api.RootKeyStateActive, first.State)
	must.Eq(t, api.EncryptionAlgorithmAES256GCM, first.Algorithm)
	set := getJWKS(t, a)
	must.SliceLen(t, 1, set.Keys)
	jwk := set.Keys[0]
	must.Eq(t, first.KeyID, jwk.KeyID)
	must.Eq(t, "RS256", jwk.Algorithm)
	must.Eq(t, "sig", jwk.Use)
	must.True(t, jwk.Valid())
	must.True(t, jwk.IsPublic())

	rotated, wm, err := c.Keyring().Rotate(nil, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	must.NotEq(t, first.KeyID, rotated.KeyID)
	must.Eq(t, api.RootKeyStateActive, rotated.State)
	keys, _, err = c.Keyring().List(&api.QueryOptions{WaitIndex: rotated.CreateIndex})
	must.NoError(t, err)
	states := map[string]api.RootKeyState{}
	for _, k := range keys {
		states[k.KeyID] = k.State
	}
	must.Eq(t, map[string]api.RootKeyState{first.KeyID: api.RootKeyStateInactive, rotated.KeyID: api.RootKeyStateActive}, states)
	must.SliceLen(t, 2, getJWKS(t, a).Keys, must.Sprint("the old key stays published for verification"))

	base := a.HTTPAddr() + "/v1/operator/keyring/"
	cases := []struct {
		name, method, path string
		code               int
		want               string
	}{
		{"full rotation with a publish time", http.MethodPut, "rotate?full&publish_time=4102444800000000000", 400, "full and publish_time cannot be used together"},
		{"negative publish_time", http.MethodPut, "rotate?publish_time=-5", 400, "invalid publish_time -5"},
		{"bad publish_time", http.MethodPut, "rotate?publish_time=soon", 400, `invalid publish_time "soon"`},
		{"other algorithm", http.MethodPut, "rotate?algo=xchacha20", 400, `invalid algo "xchacha20"`},
		{"delete the active key", http.MethodDelete, "key/" + rotated.KeyID, 400, "is active and cannot be deleted"},
		{"delete an unknown key", http.MethodDelete, "key/00000000-0000-0000-0000-000000000000", 404, "not found"},
		{"bad force", http.MethodDelete, "key/" + first.KeyID + "?force=maybe", 422, `invalid force parameter "maybe"`},
		{"list by PUT", http.MethodPut, "keys", 405, "Invalid method"},
		{"unknown path", http.MethodGet, "other", 404, "no endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := httpDo(t, tc.method, base+tc.path)
			must.Eq(t, tc.code, code, must.Sprint(body))
			must.StrContains(t, body, tc.want)
		})
	}
	keys, _, err = c.Keyring().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, keys, must.Sprint("refused requests wrote nothing"))

	// A prepublished key is in the JWKS before it signs anything.
	const in2100 = int64(4102444800000000000)
	pre, _, err := c.Keyring().Rotate(&api.KeyringRotateOptions{PublishTime: in2100}, nil)
	must.NoError(t, err)
	must.Eq(t, api.RootKeyStatePrepublished, pre.State)
	must.Eq(t, in2100, pre.PublishTime)
	must.SliceLen(t, 3, getJWKS(t, a).Keys)
	_, err = c.Keyring().Delete(&api.KeyringDeleteOptions{KeyID: pre.KeyID}, nil)
	must.NoError(t, err)

	// The official client's own CRUD test deletes the old key with force.
	_, err = c.Keyring().Delete(&api.KeyringDeleteOptions{KeyID: first.KeyID, Force: true}, nil)
	must.NoError(t, err)
	keys, _, err = c.Keyring().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, keys)
	must.Eq(t, rotated.KeyID, keys[0].KeyID)
	must.SliceLen(t, 1, getJWKS(t, a).Keys)
}

// A real raw_exec task with `identity { env = true, file = true }` gets
// its identity as NOMAD_TOKEN and secrets/nomad_token; the JWT verifies
// against the JWKS and carries the task's claims. A task without the
// block gets neither, and the HTTP API never shows the token.
func TestWorkloadIdentity_RawExecTaskVerifiesAgainstJWKS(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	job := api.NewBatchJob("wid", "wid", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	script := `printf 'env=%s\nfile=%s\n' "$NOMAD_TOKEN" "$(cat "$NOMAD_SECRETS_DIR/nomad_token" 2>/dev/null)"`
	with := shTask("with", script)
	with.Identity = &api.WorkloadIdentity{Env: true, File: true}
	tg.AddTask(with)
	tg.AddTask(shTask("without", script))
	job.AddTaskGroup(tg)
	register(t, c, job)
	allocs := jobAllocs(t, c, "wid", 1, 30*time.Second, isTerminal)
	must.Eq(t, "complete", allocs[0].ClientStatus, must.Sprint(allocs[0].TaskStates))
	allocID := allocs[0].ID

	logs := func(task string) (env, file string) {
		t.Helper()
		code, body := httpDo(t, http.MethodGet, a.HTTPAddr()+"/v1/client/fs/logs/"+allocID+"?task="+task+"&type=stdout&plain=true")
		must.Eq(t, http.StatusOK, code, must.Sprint(body))
		for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
			k, v, _ := strings.Cut(line, "=")
			switch k {
			case "env":
				env = v
			case "file":
				file = v
			}
		}
		return env, file
	}
	token, file := logs("with")
	must.NotEq(t, "", token)
	must.Eq(t, token, file, must.Sprint("env and file carry the same identity"))
	env, file := logs("without")
	must.Eq(t, "", env)
	must.Eq(t, "", file)

	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	kid := tok.Headers[0].KeyID
	set := getJWKS(t, a)
	keys := set.Key(kid)
	must.SliceLen(t, 1, keys, must.Sprintf("the JWKS has the signing key %s", kid))
	var claims struct {
		Namespace    string `json:"nomad_namespace"`
		JobID        string `json:"nomad_job_id"`
		AllocationID string `json:"nomad_allocation_id"`
		Task         string `json:"nomad_task"`
		jwt.Claims
	}
	must.NoError(t, tok.Claims(keys[0].Key, &claims))
	must.Eq(t, "default", claims.Namespace)
	must.Eq(t, "wid", claims.JobID)
	must.Eq(t, allocID, claims.AllocationID)
	must.Eq(t, "with", claims.Task)
	must.Eq(t, "global:default:wid:g:with:default", claims.Subject)
	must.NoError(t, claims.Validate(jwt.Expected{AnyAudience: jwt.Audience{"nomadproject.io"}, Time: time.Now()}))

	_, body := httpDo(t, http.MethodGet, a.HTTPAddr()+"/v1/allocation/"+allocID)
	must.StrNotContains(t, body, token)
	must.StrNotContains(t, body, "SignedIdentities")
	stored, _, err := c.Jobs().Info("wid", nil)
	must.NoError(t, err)
	must.Eq(t, &api.WorkloadIdentity{Name: "default", Audience: []string{"nomadproject.io"}, Env: true, File: true}, stored.TaskGroups[0].Tasks[0].Identity)
}

func TestWorkloadIdentity_UnsupportedFeaturesRefused(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	cases := []struct {
		name string
		set  func(*api.Task)
		want string
	}{
		{"named identity", func(t *api.Task) {
			t.Identities = []*api.WorkloadIdentity{{Name: "vault_default", Audience: []string{"vault.io"}}}
		}, `field "Identities[0].Name" = "vault_default" is not supported by nomadq`},
		{"audience", func(t *api.Task) {
			t.Identity = &api.WorkloadIdentity{Audience: []string{"example.com"}}
		}, `field "Identity.Audience" = ["example.com"] is not supported by nomadq`},
		{"ttl", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{TTL: time.Hour} }, `field "Identity.TTL" is not supported by nomadq`},
		{"change_mode", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{ChangeMode: "restart"} }, `field "Identity.ChangeMode" is not supported by nomadq`},
		{"filepath", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{File: true, Filepath: "local/t"} }, `field "Identity.Filepath" is not supported by nomadq`},
		{"extra_claims", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{ExtraClaims: []string{"team"}} }, `field "Identity.ExtraClaims" is not supported by nomadq`},
		{"service identity", func(t *api.Task) {
			t.Services = []*api.Service{{Name: "web", Identity: &api.WorkloadIdentity{Name: "consul-service_web"}}}
		}, `job "refused" group "g" task "t": field "Services[0].Identity" is not supported by nomadq`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mockJob("refused", 1)
			tc.set(job.TaskGroups[0].Tasks[0])
			_, _, err := c.Jobs().Register(job, nil)
			must.ErrorContains(t, err, "400")
			must.ErrorContains(t, err, tc.want)
		})
	}
	jobs, _, err := c.Jobs().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jobs)
}
