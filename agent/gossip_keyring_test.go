package agent

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/nomad"
)

func newGossipKey(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	must.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// startGossipServer starts a server-only agent on its own data dir
// without waiting for a leader (a cluster member cannot have one before
// the others join). It is shut down when the test ends.
func startGossipServer(t *testing.T, name, dataDir, key string, expect int, join []string) *Agent {
	t.Helper()
	cfg := config.Dev()
	cfg.DevMode = false
	cfg.Name = name
	cfg.DataDir = dataDir
	cfg.Ports = &config.Ports{}
	cfg.LogLevel = "WARN"
	cfg.Client.Enabled = false
	cfg.Server.NumSchedulers = 1
	cfg.Server.BootstrapExpect = expect
	cfg.Server.RetryJoin = join
	cfg.Server.RetryInterval = 200 * time.Millisecond
	cfg.Server.EncryptKey = key
	var out io.Writer = io.Discard
	if os.Getenv("NOMADQ_TEST_LOG") != "" {
		out = os.Stderr
	}
	a, err := New(cfg, out)
	must.NoError(t, err)
	t.Cleanup(func() { _ = a.Shutdown() })
	return a
}

// waitAliveMembers waits until a's serf sees exactly the named servers
// alive.
func waitAliveMembers(t *testing.T, a *Agent, names ...string) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		alive := map[string]bool{}
		for _, m := range a.server.Members() {
			if m.Status == serf.StatusAlive {
				alive[m.Name] = true
			}
		}
		for _, n := range names {
			if !alive[n+".global"] {
				return fmt.Errorf("%s not alive in %v", n, alive)
			}
		}
		if len(alive) != len(names) {
			return fmt.Errorf("alive %v, want %v", alive, names)
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
}

func keyringFile(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, nomad.SerfKeyringFile))
	must.NoError(t, err)
	var keys []string
	must.NoError(t, json.Unmarshal(b, &keys))
	return keys
}

// TestGossipKeyring_WrongKeyStaysOut: servers gossip only with servers
// that hold their key; one with another key, or none, cannot join.
func TestGossipKeyring_WrongKeyStaysOut(t *testing.T) {
	k1, k2 := newGossipKey(t, 32), newGossipKey(t, 16)
	d1 := t.TempDir()
	a1 := startGossipServer(t, "enc-1", d1, k1, 1, nil)
	must.Eq(t, []string{k1}, keyringFile(t, d1))

	wrong := startGossipServer(t, "enc-wrong", t.TempDir(), k2, 2, nil)
	n, err := apiClient(t, wrong).Agent().Join(a1.SerfAddr())
	must.Error(t, err)
	must.Zero(t, n)

	plain := startGossipServer(t, "enc-plain", t.TempDir(), "", 2, nil)
	n, err = apiClient(t, plain).Agent().Join(a1.SerfAddr())
	must.Error(t, err)
	must.Zero(t, n)

	// Nor can the keyed server pull the plain one in.
	n, err = apiClient(t, a1).Agent().Join(plain.SerfAddr())
	must.Error(t, err)
	must.Zero(t, n)

	// The right key joins.
	right := startGossipServer(t, "enc-right", t.TempDir(), k1, 2, nil)
	n, err = apiClient(t, right).Agent().Join(a1.SerfAddr())
	must.NoError(t, err)
	must.One(t, n)
	waitAliveMembers(t, a1, "enc-1", "enc-right")
}

// TestGossipKeyring_RotationKeepsClusterJoined rotates the key of a
// three-server cluster through the official client (install, use,
// remove) and checks the servers stay joined, the old key no longer gets
// in, and a restarted server gossips with the keyring it persisted.
func TestGossipKeyring_RotationKeepsClusterJoined(t *testing.T) {
	k1, k2 := newGossipKey(t, 32), newGossipKey(t, 32)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	a1 := startGossipServer(t, "rot-1", dirs[0], k1, 3, nil)
	a2 := startGossipServer(t, "rot-2", dirs[1], k1, 3, []string{a1.SerfAddr()})
	a3 := startGossipServer(t, "rot-3", dirs[2], k1, 3, []string{a1.SerfAddr()})
	for _, a := range []*Agent{a1, a2, a3} {
		waitAliveMembers(t, a, "rot-1", "rot-2", "rot-3")
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return a1.server.Leader() != "" && a2.server.Leader() != "" && a3.server.Leader() != ""
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))

	// a2 and a3 retry-join, which shortens their gossip (and so serf
	// query) intervals: ask through a2.
	ag := apiClient(t, a2).Agent()
	resp, err := ag.InstallKey(k2)
	must.NoError(t, err)
	must.Eq(t, 3, resp.NumNodes)
	resp, err = ag.ListKeys()
	must.NoError(t, err)
	must.Eq(t, map[string]int{k1: 3, k2: 3}, resp.Keys)
	must.Eq(t, 3, resp.NumNodes)

	_, err = ag.UseKey(k2)
	must.NoError(t, err)
	// The primary key cannot go; the refusal names why, per server.
	_, err = ag.RemoveKey(k2)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "removing the primary key is not allowed")
	_, err = ag.RemoveKey(k1)
	must.NoError(t, err)

	resp, err = ag.ListKeys()
	must.NoError(t, err)
	must.Eq(t, map[string]int{k2: 3}, resp.Keys)
	for _, d := range dirs {
		must.Eq(t, []string{k2}, keyringFile(t, d))
	}
	for _, a := range []*Agent{a1, a2, a3} {
		waitAliveMembers(t, a, "rot-1", "rot-2", "rot-3")
	}

	// The retired key no longer gets in.
	old := startGossipServer(t, "rot-old", t.TempDir(), k1, 3, nil)
	_, err = apiClient(t, old).Agent().Join(a1.SerfAddr())
	must.Error(t, err)

	// A restart keeps the installed keys: rot-3 comes back without
	// server.encrypt, from its keyring file alone, and rejoins.
	must.NoError(t, a3.Shutdown())
	a3 = startGossipServer(t, "rot-3", dirs[2], "", 3, []string{a1.SerfAddr()})
	// The keyring query goes to the members the asking server sees
	// alive: wait until each of the three, rot-3 included, sees all.
	for _, a := range []*Agent{a1, a2, a3} {
		waitAliveMembers(t, a, "rot-1", "rot-2", "rot-3")
	}
	resp, err = apiClient(t, a3).Agent().ListKeys()
	must.NoError(t, err)
	must.Eq(t, map[string]int{k2: 3}, resp.Keys)
}

// TestGossipKeyring_HTTPRefusals: bad input is a 4xx naming the problem,
// and a cluster without encryption says so.
func TestGossipKeyring_HTTPRefusals(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{http.MethodPut, "/v1/agent/keyring/list", "", http.StatusMethodNotAllowed, "Invalid method"},
		{http.MethodGet, "/v1/agent/keyring/install", "", http.StatusMethodNotAllowed, "Invalid method"},
		{http.MethodGet, "/v1/agent/keyring/rotate", "", http.StatusNotFound, `keyring operation "rotate" not found: must be list, install, use or remove`},
		{http.MethodPut, "/v1/agent/keyring/install", "", http.StatusBadRequest, "Request body is empty"},
		{http.MethodPut, "/v1/agent/keyring/install", `{"Key": ""}`, http.StatusBadRequest, "Key is missing"},
		{http.MethodPut, "/v1/agent/keyring/use", `{"Key": "not base64!"}`, http.StatusBadRequest, "Key is not allowed: the key is not valid base64"},
		{http.MethodPut, "/v1/agent/keyring/remove", `{"Key": "c2hvcnQ="}`, http.StatusBadRequest, "Key is not allowed: the key decodes to 5 bytes: must be 16, 24 or 32 bytes"},
		{http.MethodGet, "/v1/agent/keyring/list", "", http.StatusBadRequest, "Keyring is empty (encryption not enabled)"},
	}
	for _, tc := range cases {
		resp := doRaw(t, a, tc.method, tc.path, tc.body)
		body := readBody(t, resp)
		must.Eq(t, tc.code, resp.StatusCode, must.Sprintf("%s %s: %s", tc.method, tc.path, body))
		must.StrContains(t, body, tc.want)
	}
}

// TestGossipKeyring_BadConfigKeyRefused: the agent does not start with a
// key memberlist cannot use, and says which setting and what is allowed
// without printing the key.
func TestGossipKeyring_BadConfigKeyRefused(t *testing.T) {
	cases := []struct{ key, want string }{
		{"not base64!", "server.encrypt is not allowed: the key is not valid base64"},
		{base64.StdEncoding.EncodeToString([]byte("twenty-bytes-long!!!")), "server.encrypt is not allowed: the key decodes to 20 bytes: must be 16, 24 or 32 bytes (AES-128, AES-192 or AES-256)"},
	}
	for _, tc := range cases {
		cfg := config.Dev()
		cfg.Server.EncryptKey = tc.key
		err := cfg.Validate()
		must.ErrorContains(t, err, tc.want)
		must.StrNotContains(t, err.Error(), tc.key)
	}
	// 16, 24 and 32 bytes are the AES-128, -192 and -256 keys.
	for _, n := range []int{16, 24, 32} {
		cfg := config.Dev()
		cfg.Server.EncryptKey = newGossipKey(t, n)
		must.NoError(t, cfg.Validate())
	}
}

// TestGossipKeyring_ACL: with ACLs on, the gossip keyring needs agent
// write, as in Nomad, even to list.
func TestGossipKeyring_ACL(t *testing.T) {
	a, c, _ := aclAgent(t)
	_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "agent-read", Rules: `agent { policy = "read" }`}, nil)
	must.NoError(t, err)
	_, err = c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "agent-write", Rules: `agent { policy = "write" }`}, nil)
	must.NoError(t, err)
	reader, _, err := c.ACLTokens().Create(&api.ACLToken{Name: "r", Type: "client", Policies: []string{"agent-read"}}, nil)
	must.NoError(t, err)
	writer, _, err := c.ACLTokens().Create(&api.ACLToken{Name: "w", Type: "client", Policies: []string{"agent-write"}}, nil)
	must.NoError(t, err)

	for name, secret := range map[string]string{"anonymous": "", "agent read": reader.SecretID} {
		cl := apiClient(t, a)
		cl.SetSecretID(secret)
		_, err := cl.Agent().ListKeys()
		must.ErrorContains(t, err, "403", must.Sprint(name))
		_, err = cl.Agent().InstallKey(newGossipKey(t, 32))
		must.ErrorContains(t, err, "403", must.Sprint(name))
	}
	// Agent write passes the check; this dev cluster has no encryption.
	cl := apiClient(t, a)
	cl.SetSecretID(writer.SecretID)
	_, err = cl.Agent().ListKeys()
	must.ErrorContains(t, err, "Keyring is empty (encryption not enabled)")
}

// TestGossipKeyring_ConfigKey: server.encrypt is read (no "ignored"
// warning) and kept out of /v1/agent/self.
func TestGossipKeyring_ConfigKey(t *testing.T) {
	key := newGossipKey(t, 32)
	cfg := config.Default()
	var warnings []string
	err := config.Parse(cfg, "x.hcl", []byte("server {\n  enabled = true\n  encrypt = \""+key+"\"\n}\n"), func(w string) { warnings = append(warnings, w) })
	must.NoError(t, err)
	must.SliceEmpty(t, warnings)
	must.Eq(t, key, cfg.Server.EncryptKey)
	b, err := json.Marshal(cfg)
	must.NoError(t, err)
	must.StrNotContains(t, string(b), key)
}
