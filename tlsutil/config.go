package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
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
// from which each connection kind gets its tls.Config.
type Set struct {
	conf       Config
	region     string
	roots      *x509.CertPool
	cert       tls.Certificate
	minVersion uint16
	suites     []uint16
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
	if c.CAFile != "" {
		pemBytes, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: %w", err)
		}
		s.roots = x509.NewCertPool()
		if !s.roots.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("tls.ca_file %s: no PEM-encoded certificate found", c.CAFile)
		}
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %s / tls.key_file %s: %w", c.CertFile, c.KeyFile, err)
	}
	s.cert = cert
	return s, nil
}

// Config returns the tls block the set was loaded from.
func (s *Set) Config() Config { return s.conf }

// ServerName is the name every server's certificate carries:
// server.<region>.nomad.
func (s *Set) ServerName() string { return RoleServer + "." + s.region + "." + DefaultDomain }

func (s *Set) base() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{s.cert},
		MinVersion:   s.minVersion,
		CipherSuites: s.suites,
	}
}

// IncomingRPC is what a server answers TLS RPC and Raft connections
// with: its certificate, and a client certificate signed by the CA
// required of the other side.
func (s *Set) IncomingRPC() *tls.Config {
	c := s.base()
	c.ClientCAs = s.roots
	c.ClientAuth = tls.RequireAndVerifyClientCert
	return c
}

// OutgoingRPC is what clients and servers dial servers with: the
// agent's certificate, and the server's checked against the CA, and for
// its name server.<region>.nomad when verify_server_hostname is set.
func (s *Set) OutgoingRPC() *tls.Config {
	c := s.base()
	c.RootCAs = s.roots
	if s.conf.VerifyServerHostname {
		c.ServerName = s.ServerName()
		return c
	}
	s.chainOnly(c)
	return c
}

// IncomingHTTP is what the HTTPS API serves with; with
// verify_https_client it requires a client certificate signed by the CA.
func (s *Set) IncomingHTTP() *tls.Config {
	c := s.base()
	if s.conf.VerifyHTTPSClient {
		c.ClientCAs = s.roots
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c
}

// OutgoingHTTP is what an agent reaches another agent's HTTPS API with
// (a request forwarded to the node running an alloc): its certificate,
// and the other side's checked against the CA. Nodes are reached at
// their addresses, which their certificates need not name, so only the
// chain is checked.
func (s *Set) OutgoingHTTP() *tls.Config {
	c := s.base()
	c.RootCAs = s.roots
	s.chainOnly(c)
	return c
}

// chainOnly makes c check the peer's chain against the CA but not its
// name. Go checks names whenever it checks at all, so its own check is
// turned off and VerifyConnection does the chain.
func (s *Set) chainOnly(c *tls.Config) {
	roots := s.roots
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: server presented no certificate")
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
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
