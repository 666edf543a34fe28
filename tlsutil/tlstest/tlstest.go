// Package tlstest makes certificate authorities and certificates for
// tests, with the code `nomad tls` uses, in a test's temporary
// directory: no key is ever committed. Only tests import it.
package tlstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nomadq/nomadq/tlsutil"
)

// CA is a certificate authority whose files live in a test's temporary
// directory.
type CA struct {
	t      testing.TB
	dir    string
	CAFile string
	caPEM  string
	keyPEM string
}

// NewCA makes a CA the way `nomad tls ca create` does.
func NewCA(t testing.TB) *CA {
	t.Helper()
	cert, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatalf("generate CA: %v", err)
	}
	ca := &CA{t: t, dir: t.TempDir(), caPEM: cert, keyPEM: key}
	ca.CAFile = ca.write("nomad-agent-ca.pem", cert)
	return ca
}

// Cert makes a certificate for role in region (as `nomad tls cert
// create -<role> -region <region>` does) and returns its certificate and
// key files.
func (ca *CA) Cert(role, region string) (certFile, keyFile string) {
	ca.t.Helper()
	o := tlsutil.CertOptions{Role: role, Region: region}
	cert, key, err := tlsutil.GenerateCert(ca.caPEM, ca.keyPEM, o)
	if err != nil {
		ca.t.Fatalf("generate %s certificate: %v", role, err)
	}
	return ca.write(o.FilePrefix()+".pem", cert), ca.write(o.FilePrefix()+"-key.pem", key)
}

// Config is a tls block with http and rpc on, this CA, and a
// certificate for role in region.
func (ca *CA) Config(role, region string) *tlsutil.Config {
	ca.t.Helper()
	cert, key := ca.Cert(role, region)
	return &tlsutil.Config{EnableHTTP: true, EnableRPC: true, CAFile: ca.CAFile, CertFile: cert, KeyFile: key}
}

func (ca *CA) write(name, content string) string {
	ca.t.Helper()
	p := filepath.Join(ca.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		ca.t.Fatalf("write %s: %v", p, err)
	}
	return p
}
