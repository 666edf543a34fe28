package agent

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/structs"
	"github.com/nomadq/nomadq/tlsutil"
	"github.com/nomadq/nomadq/tlsutil/tlstest"
)

// tlsAPI is an official api client for a with the given TLS settings.
func tlsAPI(t *testing.T, a *Agent, tc *api.TLSConfig) *api.Client {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address = a.HTTPAddr()
	cfg.TLSConfig = tc
	c, err := api.NewClient(cfg)
	must.NoError(t, err)
	return c
}

// An agent with tls.http serves HTTPS only, and with verify_https_client
// only to holders of a certificate from its CA; with tls.rpc its RPC
// port takes mutual TLS only.
func TestTLS_HTTPSAndRPCRequireTheCA(t *testing.T) {
	ca := tlstest.NewCA(t)
	a := NewTestAgent(t, func(c *config.Config) {
		c.TLS = ca.Config(tlsutil.RoleServer, "global")
		c.TLS.VerifyHTTPSClient = true
	})
	must.StrHasPrefix(t, "https://", a.HTTPAddr())

	// Plain HTTP is refused.
	resp, err := http.Get("http://" + strings.TrimPrefix(a.HTTPAddr(), "https://") + "/v1/agent/self")
	must.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, string(body), "HTTP request to an HTTPS server")

	// The official client with the CA and a CLI certificate works.
	cliCert, cliKey := ca.Cert(tlsutil.RoleCLI, "global")
	good := tlsAPI(t, a, &api.TLSConfig{CACert: ca.CAFile, ClientCert: cliCert, ClientKey: cliKey})
	leader, err := good.Status().Leader()
	must.NoError(t, err)
	must.NotEq(t, "", leader)
	nodes, _, err := good.Nodes().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	node, _, err := good.Nodes().Info(nodes[0].ID, nil)
	must.NoError(t, err)
	must.True(t, node.TLSEnabled)
	self, err := good.Agent().Self()
	must.NoError(t, err)
	tlsSelf, ok := self.Config["TLSConfig"].(map[string]any)
	must.True(t, ok, must.Sprintf("agent self config: %v", self.Config))
	must.Eq(t, true, tlsSelf["EnableRPC"])
	must.Eq(t, true, tlsSelf["VerifyHTTPSClient"])

	// Without the CA the server is not trusted.
	_, err = tlsAPI(t, a, &api.TLSConfig{ClientCert: cliCert, ClientKey: cliKey}).Status().Leader()
	must.ErrorContains(t, err, "certificate signed by unknown authority")
	// Without a client certificate the server hangs up.
	_, err = tlsAPI(t, a, &api.TLSConfig{CACert: ca.CAFile}).Status().Leader()
	must.Error(t, err)
	// A certificate from another CA is refused too.
	other := tlstest.NewCA(t)
	otherCert, otherKey := other.Cert(tlsutil.RoleCLI, "global")
	_, err = tlsAPI(t, a, &api.TLSConfig{CACert: ca.CAFile, ClientCert: otherCert, ClientKey: otherKey}).Status().Leader()
	must.Error(t, err)

	// RPC: plain connections are closed, mutual TLS with the CA works.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var reply string
	plain := msgpackrpc.NewPool(5 * time.Second)
	defer plain.Shutdown()
	must.Error(t, plain.Call(ctx, a.RPCAddr(), "Status.Leader", &structs.GenericRequest{}, &reply))

	clientTLS, err := tlsutil.Load(ca.Config(tlsutil.RoleClient, "global"), "global")
	must.NoError(t, err)
	mtls := msgpackrpc.NewPool(5 * time.Second)
	defer mtls.Shutdown()
	mtls.UseTLS(clientTLS.OutgoingRPC())
	must.NoError(t, mtls.Call(ctx, a.RPCAddr(), "Status.Leader", &structs.GenericRequest{}, &reply))

	otherTLS, err := tlsutil.Load(other.Config(tlsutil.RoleClient, "global"), "global")
	must.NoError(t, err)
	foreign := msgpackrpc.NewPool(5 * time.Second)
	defer foreign.Shutdown()
	foreign.UseTLS(otherTLS.OutgoingRPC())
	must.Error(t, foreign.Call(ctx, a.RPCAddr(), "Status.Leader", &structs.GenericRequest{}, &reply))
}

// Client agents reach a tls.rpc server only with a certificate from its
// CA, and with verify_server_hostname only a server whose certificate
// names server.<region>.nomad.
func TestTLS_ClientJoin(t *testing.T) {
	ca := tlstest.NewCA(t)
	// The server's certificate is for another region: its chain is good,
	// its name is not server.global.nomad.
	srv := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.TLS = ca.Config(tlsutil.RoleServer, "elsewhere")
	})
	cliCert, cliKey := ca.Cert(tlsutil.RoleCLI, "global")
	apic := tlsAPI(t, srv, &api.TLSConfig{CACert: ca.CAFile, ClientCert: cliCert, ClientKey: cliKey})

	startClient := func(name string, tc *tlsutil.Config) *logBuffer {
		log := &logBuffer{}
		cfg := config.Dev()
		cfg.Name = name
		cfg.Ports = &config.Ports{}
		cfg.LogLevel = "WARN"
		cfg.DevMode = false
		cfg.Server.Enabled = false
		cfg.DataDir = t.TempDir()
		cfg.Client.Servers = []string{srv.RPCAddr()}
		cfg.TLS = tc
		a, err := New(cfg, io.MultiWriter(log, testLogOutput()))
		must.NoError(t, err)
		t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
		return log
	}
	other := tlstest.NewCA(t)
	foreignLog := startClient("foreign-ca", other.Config(tlsutil.RoleClient, "global"))
	strict := ca.Config(tlsutil.RoleClient, "global")
	strict.VerifyServerHostname = true
	strictLog := startClient("wrong-server-name", strict)
	startClient("trusted", ca.Config(tlsutil.RoleClient, "global"))

	names := func() map[string]bool {
		nodes, _, err := apic.Nodes().List(nil)
		must.NoError(t, err)
		out := map[string]bool{}
		for _, n := range nodes {
			out[n.Name] = true
		}
		return out
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return names()["trusted"] }),
		wait.Timeout(20*time.Second), wait.Gap(50*time.Millisecond)))
	// The others tried, and were refused: a registration attempt of each
	// failed (the handshake), and neither is a node.
	waitLogLine(t, foreignLog, "node registration failed")
	waitLogLine(t, strictLog, "node registration failed")
	got := names()
	must.False(t, got["foreign-ca"], must.Sprint("a client with another CA's certificate registered"))
	must.False(t, got["wrong-server-name"], must.Sprint("verify_server_hostname accepted server.elsewhere.nomad"))
}

// The tls block: every key of Nomad's is read; bad values and missing
// files are refused naming the key.
func TestTLS_Config(t *testing.T) {
	c := config.Default()
	err := config.Parse(c, "tls.hcl", []byte(`
tls {
  http = true
  rpc = true
  ca_file = "ca.pem"
  cert_file = "cert.pem"
  key_file = "key.pem"
  verify_server_hostname = true
  verify_https_client = true
  rpc_upgrade_mode = true
  tls_min_version = "tls13"
  tls_cipher_suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
}
`), nil)
	must.NoError(t, err)
	must.Eq(t, tlsutil.Config{EnableHTTP: true, EnableRPC: true, CAFile: "ca.pem", CertFile: "cert.pem", KeyFile: "key.pem",
		VerifyServerHostname: true, VerifyHTTPSClient: true, RPCUpgradeMode: true, MinVersion: "tls13",
		CipherSuites: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, *c.TLS)

	err = config.Parse(config.Default(), "tls.hcl", []byte("tls {\n  tls_prefer_server_cipher_suites = true\n}\n"), nil)
	must.ErrorContains(t, err, `unknown config key "tls.tls_prefer_server_cipher_suites"`)

	for _, tc := range []struct {
		tls  tlsutil.Config
		want string
	}{
		{tlsutil.Config{EnableHTTP: true}, "tls.cert_file must be set"},
		{tlsutil.Config{EnableRPC: true, CertFile: "c", KeyFile: "k"}, "tls.ca_file must be set when tls.rpc is true"},
		{tlsutil.Config{EnableHTTP: true, CertFile: "c", KeyFile: "k", MinVersion: "ssl3"}, `tls.tls_min_version "ssl3" is not allowed`},
		{tlsutil.Config{EnableHTTP: true, CertFile: "c", KeyFile: "k", CipherSuites: "TLS_RSA_WITH_RC4_128_SHA"}, `tls.tls_cipher_suites: "TLS_RSA_WITH_RC4_128_SHA" is not allowed`},
	} {
		c := config.Dev()
		c.TLS = &tc.tls
		must.ErrorContains(t, c.Validate(), tc.want)
	}

	c = config.Dev()
	c.Ports = &config.Ports{}
	c.TLS = &tlsutil.Config{EnableHTTP: true, CertFile: "/nonexistent/cert.pem", KeyFile: "/nonexistent/key.pem"}
	_, err = New(c, io.Discard)
	must.ErrorContains(t, err, "tls.cert_file /nonexistent/cert.pem")
}

// With verify_server_hostname, a Raft connection must come from a
// server certificate: a client's, though from the same CA, is hung up on.
func TestTLS_RaftPeerNeedsServerCert(t *testing.T) {
	ca := tlstest.NewCA(t)
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.TLS = ca.Config(tlsutil.RoleServer, "global")
		c.TLS.VerifyServerHostname = true
	})
	raftConn := func(role string) error {
		set, err := tlsutil.Load(ca.Config(role, "global"), "global")
		must.NoError(t, err)
		raw, err := net.DialTimeout("tcp", a.RPCAddr(), 5*time.Second)
		must.NoError(t, err)
		conn, err := msgpackrpc.Announce(context.Background(), raw, msgpackrpc.ConnRaft, set.OutgoingRPC())
		must.NoError(t, err)
		defer conn.Close()
		// A Raft peer that is kept waits for our first message; one that
		// is refused reads the end of the connection.
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		_, err = conn.Read(make([]byte, 1))
		return err
	}
	err := raftConn(tlsutil.RoleServer)
	must.ErrorIs(t, err, os.ErrDeadlineExceeded)
	must.ErrorIs(t, raftConn(tlsutil.RoleClient), io.EOF)
}

// rpc_upgrade_mode lets plain RPC in beside mutual TLS.
func TestTLS_RPCUpgradeMode(t *testing.T) {
	ca := tlstest.NewCA(t)
	a := NewTestAgent(t, func(c *config.Config) {
		c.TLS = ca.Config(tlsutil.RoleServer, "global")
		c.TLS.RPCUpgradeMode = true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var reply string
	plain := msgpackrpc.NewPool(5 * time.Second)
	defer plain.Shutdown()
	must.NoError(t, plain.Call(ctx, a.RPCAddr(), "Status.Leader", &structs.GenericRequest{}, &reply))
	set, err := tlsutil.Load(ca.Config(tlsutil.RoleClient, "global"), "global")
	must.NoError(t, err)
	mtls := msgpackrpc.NewPool(5 * time.Second)
	defer mtls.Shutdown()
	mtls.UseTLS(set.OutgoingRPC())
	must.NoError(t, mtls.Call(ctx, a.RPCAddr(), "Status.Leader", &structs.GenericRequest{}, &reply))
}

// A reload (SIGHUP) rolls the CA, certificate and key for every new
// handshake; other keys of the block need a restart.
func TestTLS_ReloadRollsCertificates(t *testing.T) {
	dir := t.TempDir()
	conf := &tlsutil.Config{EnableHTTP: true, EnableRPC: true, VerifyHTTPSClient: true,
		CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")}
	install := func(ca *tlstest.CA) {
		cert, key := ca.Cert(tlsutil.RoleServer, "global")
		for from, to := range map[string]string{ca.CAFile: conf.CAFile, cert: conf.CertFile, key: conf.KeyFile} {
			b, err := os.ReadFile(from)
			must.NoError(t, err)
			must.NoError(t, os.WriteFile(to, b, 0o600))
		}
	}
	cli := func(ca *tlstest.CA) *api.TLSConfig {
		cert, key := ca.Cert(tlsutil.RoleCLI, "global")
		return &api.TLSConfig{CACert: ca.CAFile, ClientCert: cert, ClientKey: key}
	}
	oldCA, newCA := tlstest.NewCA(t), tlstest.NewCA(t)
	install(oldCA)
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		copied := *conf
		c.TLS = &copied
	})
	_, err := tlsAPI(t, a, cli(oldCA)).Status().Leader()
	must.NoError(t, err)

	install(newCA)
	must.NoError(t, a.ReloadTLS(conf))
	_, err = tlsAPI(t, a, cli(oldCA)).Status().Leader()
	must.ErrorContains(t, err, "certificate signed by unknown authority")
	_, err = tlsAPI(t, a, cli(newCA)).Status().Leader()
	must.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var reply string
	for ca, ok := range map[*tlstest.CA]bool{oldCA: false, newCA: true} {
		set, err := tlsutil.Load(ca.Config(tlsutil.RoleClient, "global"), "global")
		must.NoError(t, err)
		pool := msgpackrpc.NewPool(5 * time.Second)
		pool.UseTLS(set.OutgoingRPC())
		err = pool.Call(ctx, a.RPCAddr(), "Status.Leader", &structs.GenericRequest{}, &reply)
		pool.Shutdown()
		must.Eq(t, ok, err == nil, must.Sprintf("RPC with a certificate of the %v CA: %v", map[bool]string{true: "new", false: "old"}[ok], err))
	}

	changed := *conf
	changed.VerifyServerHostname = true
	must.ErrorContains(t, a.ReloadTLS(&changed), "tls.verify_server_hostname changed from false to true: restart the agent")
}
