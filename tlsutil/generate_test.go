package tlsutil

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/shoenig/test/must"
)

func TestGenerate_RolesAndNames(t *testing.T) {
	ca, caKey, err := GenerateCA(CAOptions{})
	must.NoError(t, err)
	caCert, err := ParseCert(ca)
	must.NoError(t, err)
	must.True(t, caCert.IsCA)
	must.StrHasPrefix(t, "Nomad Agent CA ", caCert.Subject.CommonName)

	cert, key, err := GenerateCert(ca, caKey, CertOptions{Role: RoleServer, Region: "west",
		DNSNames: []string{"nomad.example"}, IPAddresses: []net.IP{net.ParseIP("10.1.2.3")}})
	must.NoError(t, err)
	_, err = tls.X509KeyPair([]byte(cert), []byte(key))
	must.NoError(t, err)
	must.NoError(t, Verify(ca, cert, "server.west.nomad"))
	must.NoError(t, Verify(ca, cert, "nomad.example"))
	must.Error(t, Verify(ca, cert, "server.global.nomad"))
	must.Eq(t, "west-server-nomad", CertOptions{Role: RoleServer, Region: "west"}.FilePrefix())

	other, _, err := GenerateCA(CAOptions{})
	must.NoError(t, err)
	must.ErrorContains(t, Verify(other, cert, "server.west.nomad"), "unknown authority")

	_, _, err = GenerateCert(ca, caKey, CertOptions{Role: "admin"})
	must.ErrorContains(t, err, `certificate role "admin" is not allowed`)
	_, _, err = GenerateCA(CAOptions{Country: "DE"})
	must.ErrorContains(t, err, "common name value not provided")
}

// A CA with a name constraint signs names in its zones only.
func TestGenerate_NameConstraint(t *testing.T) {
	ca, caKey, err := GenerateCA(CAOptions{PermittedDNSDomains: []string{"example.com", "localhost", "nomad"}})
	must.NoError(t, err)
	_, _, err = GenerateCert(ca, caKey, CertOptions{Role: RoleClient, Domain: "example.com"})
	must.NoError(t, err)
	_, _, err = GenerateCert(ca, caKey, CertOptions{Role: RoleClient, DNSNames: []string{"evil.org"}})
	must.Error(t, err)
}
