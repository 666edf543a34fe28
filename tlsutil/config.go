package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
)

// Config is the agent config's tls block. Its JSON is Nomad's
// TLSConfig as /v1/agent/self shows it.
type Config struct {
	// EnableHTTP serves the HTTP API over HTTPS only.
	EnableHTTP bool
	// EnableRPC makes server RPC, Raft and client-to-server RPC mutual
	// TLS with certificates signed by the CA.
	EnableRPC bool
	CAFile    string
	CertFile  string
	KeyFile   string
	// VerifyServerHostname makes outgoing RPC check that the server's
	// certificate names server.<region>.nomad, and incoming Raft check
	// that the peer's does.
	VerifyServerHostname bool
	// VerifyHTTPSClient makes the HTTPS API require a client certificate
	// signed by the CA.
	VerifyHTTPSClient bool
	// RPCUpgradeMode lets a server with EnableRPC also accept plain RPC
	// and Raft connections while a cluster moves to TLS; outgoing
	// connections use TLS.
	RPCUpgradeMode bool
	// CipherSuites is tls_cipher_suites: a comma-separated list of Go
	// cipher suite names for TLS 1.2 ("" means Go's defaults).
	CipherSuites string `json:"TLSCipherSuites"`
	// MinVersion is tls_min_version: tls10, tls11, tls12 (the default)
	// or tls13.
	MinVersion string `json:"TLSMinVersion"`
}

// Enabled reports whether the agent uses TLS at all.
func (c *Config) Enabled() bool { return c != nil && (c.EnableHTTP || c.EnableRPC) }

var minVersions = map[string]uint16{
	"tls10": tls.VersionTLS10,
	"tls11": tls.VersionTLS11,
	"tls12": tls.VersionTLS12,
	"tls13": tls.VersionTLS13,
}

// Validate checks what can be checked without reading the files.
func (c *Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []string
	if c.CertFile == "" {
		errs = append(errs, "tls.cert_file must be set when tls.http or tls.rpc is true")
	}
	if c.KeyFile == "" {
		errs = append(errs, "tls.key_file must be set when tls.http or tls.rpc is true")
	}
	if c.CAFile == "" && c.EnableRPC {
		errs = append(errs, "tls.ca_file must be set when tls.rpc is true: RPC is mutual TLS")
	}
	if c.CAFile == "" && c.EnableHTTP && c.VerifyHTTPSClient {
		errs = append(errs, "tls.ca_file must be set when tls.verify_https_client is true")
	}
	if _, err := c.minVersion(); err != nil {
		errs = append(errs, err.Error())
	}
	if _, err := c.cipherSuites(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func (c *Config) minVersion() (uint16, error) {
	if c.MinVersion == "" {
		return tls.VersionTLS12, nil
	}
	v, ok := minVersions[c.MinVersion]
	if !ok {
		return 0, fmt.Errorf("tls.tls_min_version %q is not allowed: must be one of tls10, tls11, tls12, tls13", c.MinVersion)
	}
	return v, nil
}

// cipherSuites resolves tls_cipher_suites against the suites Go
// considers secure; nil means Go's defaults.
func (c *Config) cipherSuites() ([]uint16, error) {
	if strings.TrimSpace(c.CipherSuites) == "" {
		return nil, nil
	}
	known := map[string]uint16{}
	var names []string
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
		names = append(names, s.Name)
	}
	sort.Strings(names)
	var out []uint16
	for _, name := range strings.Split(c.CipherSuites, ",") {
		name = strings.TrimSpace(name)
		id, ok := known[name]
		if !ok {
			return nil, fmt.Errorf("tls.tls_cipher_suites: %q is not allowed: must be one of %s", name, strings.Join(names, ", "))
		}
		out = append(out, id)
	}
	return out, nil
}

// Set is a loaded tls block: the CA pool and the agent's certificate,
// from which each connection kind gets its tls.Config. The configs read
// the pool and certificate at each handshake, so Reload rolls them
// without new listeners or pools.
type Set struct {
	conf       Config
	region     string
	minVersion uint16
	suites     []uint16
	mat        atomic.Pointer[material]
}

// material is what the files of a tls block hold.
type material struct {
	roots *x509.CertPool
	cert  tls.Certificate
}

// Load reads the CA, certificate and key files of c for an agent of
// region. Errors name the key whose file could not be used.
func Load(c *Config, region string) (*Set, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Set{conf: *c, region: region}
	s.minVersion, _ = c.minVersion()
	s.suites, _ = c.cipherSuites()
	m, err := readMaterial(c)
	if err != nil {
		return nil, err
	}
	s.mat.Store(m)
	return s, nil
}

func readMaterial(c *Config) (*material, error) {
	m := &material{}
	if c.CAFile != "" {
		pemBytes, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: %w", err)
		}
		m.roots = x509.NewCertPool()
		if !m.roots.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("tls.ca_file %s: no PEM-encoded certificate found", c.CAFile)
		}
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %s / tls.key_file %s: %w", c.CertFile, c.KeyFile, err)
	}
	m.cert = cert
	return m, nil
}

// Reload reads the CA, certificate and key files of c (a reloaded tls
// block) and uses them for every handshake from now on; connections
// already open keep theirs. Any other key of the block must be as it
// was: changing it needs a restart, and Reload says which key.
func (s *Set) Reload(c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	for _, k := range []struct {
		key      string
		was, now any
	}{
		{"http", s.conf.EnableHTTP, c.EnableHTTP}, {"rpc", s.conf.EnableRPC, c.EnableRPC},
		{"verify_server_hostname", s.conf.VerifyServerHostname, c.VerifyServerHostname},
		{"verify_https_client", s.conf.VerifyHTTPSClient, c.VerifyHTTPSClient},
		{"rpc_upgrade_mode", s.conf.RPCUpgradeMode, c.RPCUpgradeMode},
		{"tls_cipher_suites", s.conf.CipherSuites, c.CipherSuites},
		{"tls_min_version", s.conf.MinVersion, c.MinVersion},
	} {
		if k.was != k.now {
			return fmt.Errorf("tls.%s changed from %v to %v: restart the agent to apply it", k.key, k.was, k.now)
		}
	}
	m, err := readMaterial(c)
	if err != nil {
		return err
	}
	s.mat.Store(m)
	return nil
}

// Config returns the tls block the set was loaded from.
func (s *Set) Config() Config { return s.conf }

// ServerName is the name every server's certificate carries:
// server.<region>.nomad.
func (s *Set) ServerName() string { return RoleServer + "." + s.region + "." + DefaultDomain }

func (s *Set) base() *tls.Config {
	return &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return &s.mat.Load().cert, nil
		},
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &s.mat.Load().cert, nil
		},
		MinVersion:   s.minVersion,
		CipherSuites: s.suites,
	}
}

// incoming is a server side config; with verify, a client certificate
// signed by the CA is required. The CA is the one loaded at the
// handshake.
func (s *Set) incoming(verify bool) *tls.Config {
	c := s.base()
	if verify {
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			hc := s.base()
			hc.ClientCAs = s.mat.Load().roots
			hc.ClientAuth = tls.RequireAndVerifyClientCert
			return hc, nil
		}
	}
	return c
}

// IncomingRPC is what a server answers TLS RPC and Raft connections
// with: its certificate, and a client certificate signed by the CA
// required of the other side.
func (s *Set) IncomingRPC() *tls.Config { return s.incoming(true) }

// IncomingHTTP is what the HTTPS API serves with; with
// verify_https_client it requires a client certificate signed by the CA.
func (s *Set) IncomingHTTP() *tls.Config { return s.incoming(s.conf.VerifyHTTPSClient) }

// OutgoingRPC is what clients and servers dial servers with: the
// agent's certificate, and the server's checked against the CA, and for
// its name server.<region>.nomad when verify_server_hostname is set.
func (s *Set) OutgoingRPC() *tls.Config {
	if s.conf.VerifyServerHostname {
		return s.outgoing(s.ServerName())
	}
	return s.outgoing("")
}

// OutgoingHTTP is what an agent reaches another agent's HTTPS API with
// (a request forwarded to the node running an alloc): its certificate,
// and the other side's checked against the CA. Nodes are reached at
// their addresses, which their certificates need not name, so only the
// chain is checked.
func (s *Set) OutgoingHTTP() *tls.Config { return s.outgoing("") }

// outgoing is a client side config that checks the server's chain
// against the CA loaded at the handshake, and its name unless name is
// "". Go's own check would take the CA once and the name from the
// address dialled, so it is turned off and VerifyConnection does it.
func (s *Set) outgoing(name string) *tls.Config {
	c := s.base()
	c.ServerName = name
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: server presented no certificate")
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
			DNSName: name, Roots: s.mat.Load().roots, Intermediates: inter,
		})
		return err
	}
	return c
}

// CheckRaftPeer enforces, with verify_server_hostname, that the other
// end of an incoming Raft connection holds a server certificate
// (server.<region>.nomad): a client's certificate, though signed by the
// same CA, must not make it a Raft peer.
func (s *Set) CheckRaftPeer(cs tls.ConnectionState) error {
	if !s.conf.VerifyServerHostname {
		return nil
	}
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no peer certificate")
	}
	cert := cs.PeerCertificates[0]
	if err := cert.VerifyHostname(s.ServerName()); err != nil {
		return fmt.Errorf("certificate is only valid for %v, not %s", cert.DNSNames, s.ServerName())
	}
	return nil
}
