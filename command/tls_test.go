package command

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/tlsutil"
)

// `nomad tls` writes Nomad's file names with the names each role's
// certificate must carry, and refuses to overwrite them.
func TestTLSCommands_Create(t *testing.T) {
	t.Chdir(t.TempDir())

	code, out, errOut := run(t, "", "tls", "ca", "create")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "==> CA certificate saved to: nomad-agent-ca.pem")
	must.StrContains(t, out, "==> CA certificate key saved to: nomad-agent-ca-key.pem")
	fi, err := os.Stat("nomad-agent-ca-key.pem")
	must.NoError(t, err)
	must.Eq(t, os.FileMode(0o600), fi.Mode().Perm())
	code, _, errOut = run(t, "", "tls", "ca", "create")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "CA certificate file 'nomad-agent-ca.pem' already exists")

	code, _, errOut = run(t, "", "tls", "cert", "create")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Please provide either -server, -client, or -cli")
	code, _, errOut = run(t, "", "tls", "cert", "create", "-client", "-additional-ipaddress", "not-an-ip")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `-additional-ipaddress "not-an-ip" is not allowed`)

	ca, err := os.ReadFile("nomad-agent-ca.pem")
	must.NoError(t, err)
	for _, tc := range []struct {
		args   []string
		prefix string
		dns    []string
		ips    []string
	}{
		{[]string{"-server"}, "global-server-nomad", []string{"server.global.nomad", "localhost"}, []string{"127.0.0.1"}},
		{[]string{"-client", "-region", "west", "-additional-dnsname", "node.example", "-additional-ipaddress", "10.0.0.9"},
			"west-client-nomad", []string{"node.example", "client.west.nomad", "localhost"}, []string{"10.0.0.9", "127.0.0.1"}},
		{[]string{"-cli", "-days", "30"}, "global-cli-nomad", []string{"cli.global.nomad", "localhost"}, nil},
	} {
		code, out, errOut := run(t, "", append([]string{"tls", "cert", "create"}, tc.args...)...)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "saved to "+tc.prefix+".pem")
		must.StrContains(t, out, "key saved to "+tc.prefix+"-key.pem")
		pemText, err := os.ReadFile(tc.prefix + ".pem")
		must.NoError(t, err)
		cert, err := tlsutil.ParseCert(string(pemText))
		must.NoError(t, err)
		must.Eq(t, tc.dns, cert.DNSNames)
		var ips []string
		for _, ip := range cert.IPAddresses {
			ips = append(ips, ip.String())
		}
		must.Eq(t, tc.ips, ips)
		must.NoError(t, tlsutil.Verify(string(ca), string(pemText), tc.dns[len(tc.dns)-2]))
		_, err = loadPair(tc.prefix)
		must.NoError(t, err)
	}
	code, _, errOut = run(t, "", "tls", "cert", "create", "-server")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Certificate file 'global-server-nomad.pem' already exists")

	code, out, errOut = run(t, "", "tls", "cert", "info", "west-client-nomad.pem")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Common Name    CN=client.west.nomad\n")
	must.StrContains(t, out, "Issuer CN      Nomad Agent CA ")
	must.StrContains(t, out, "DNS Names      [node.example client.west.nomad localhost]\n")
	must.StrContains(t, out, "IP Addresses   [10.0.0.9 127.0.0.1]\n")
	code, out, errOut = run(t, "", "tls", "ca", "info", "nomad-agent-ca.pem")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Permitted DNS Domains  []\n")
	code, _, errOut = run(t, "", "tls", "cert", "info", "nomad-agent-ca-key.pem")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "EC PRIVATE KEY, not CERTIFICATE")
}

// loadPair checks that a written certificate and key belong together.
func loadPair(prefix string) (*tlsutil.Set, error) {
	return tlsutil.Load(&tlsutil.Config{EnableHTTP: true, CertFile: prefix + ".pem", KeyFile: prefix + "-key.pem"}, "global")
}

// The CLI reaches an HTTPS agent that wants client certificates through
// the TLS flags or their NOMAD_* variables, and fails clearly without.
func TestTLSCommands_CLIAgainstHTTPSAgent(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{
		{"tls", "ca", "create"},
		{"tls", "cert", "create", "-server"},
		{"tls", "cert", "create", "-cli"},
	} {
		code, _, errOut := run(t, "", args...)
		must.Eq(t, 0, code, must.Sprint(errOut))
	}
	caFile := filepath.Join(dir, "nomad-agent-ca.pem")
	cliCert, cliKey := filepath.Join(dir, "global-cli-nomad.pem"), filepath.Join(dir, "global-cli-nomad-key.pem")
	a := agenttest.New(t, func(c *config.Config) {
		c.TLS = &tlsutil.Config{
			EnableHTTP: true, EnableRPC: true, VerifyHTTPSClient: true, VerifyServerHostname: true,
			CAFile: caFile, CertFile: filepath.Join(dir, "global-server-nomad.pem"), KeyFile: filepath.Join(dir, "global-server-nomad-key.pem"),
		}
	})
	addr := a.HTTPAddr()
	must.StrHasPrefix(t, "https://", addr)

	code, _, errOut := cli(t, addr, "node", "status")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "certificate signed by unknown authority")

	code, out, errOut := cli(t, addr, "node", "status", "-ca-cert", caFile, "-client-cert", cliCert, "-client-key", cliKey)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "ready")

	code, _, errOut = cli(t, addr, "node", "status", "-client-cert", cliCert, "-client-key", cliKey, "-tls-skip-verify")
	must.Eq(t, 0, code, must.Sprint(errOut))

	code, _, errOut = cli(t, addr, "node", "status", "-ca-cert", caFile, "-client-cert", cliCert, "-client-key", cliKey,
		"-tls-server-name", "server.global.nomad")
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, _, errOut = cli(t, addr, "node", "status", "-ca-cert", caFile, "-client-cert", cliCert, "-client-key", cliKey,
		"-tls-server-name", "server.other.nomad")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "server.other.nomad")

	// The same through the environment, NOMAD_ADDR included.
	t.Setenv("NOMAD_ADDR", addr)
	t.Setenv("NOMAD_CACERT", caFile)
	t.Setenv("NOMAD_CLIENT_CERT", cliCert)
	t.Setenv("NOMAD_CLIENT_KEY", cliKey)
	t.Setenv("NOMAD_TLS_SERVER_NAME", "server.global.nomad")
	code, out, errOut = run(t, "", "server", "members")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "alive")

	// A plain http:// address to the HTTPS agent fails.
	host, port, err := net.SplitHostPort(addr[len("https://"):])
	must.NoError(t, err)
	code, _, errOut = run(t, "", "node", "status", "-address", "http://"+net.JoinHostPort(host, port))
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "HTTP request to an HTTPS server")
}
