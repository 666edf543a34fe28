// Package tlsutil is nomadq's TLS: the tls block of the agent config
// turned into the tls.Configs of the HTTPS API and of mutual TLS on RPC
// and Raft, and the CA and certificates `nomad tls` generates. It uses
// the standard library only, so the server, the client and the CLI link
// it alike.
package tlsutil

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// DefaultDomain is the domain of agent certificate names
// (server.<region>.nomad), as Nomad's.
const DefaultDomain = "nomad"

// Roles a certificate is made for: agents acting as servers, agents
// acting as clients, and people using the CLI.
const (
	RoleServer = "server"
	RoleClient = "client"
	RoleCLI    = "cli"
)

// CAOptions describe a new certificate authority. A zero value makes
// Nomad's default CA (valid 1825 days, "Nomad Agent CA <serial>").
type CAOptions struct {
	Days int
	// PermittedDNSDomains, when set, limit the names the CA may sign
	// (a critical name constraint).
	PermittedDNSDomains []string
	// CommonName and the subject fields below customize the CA; a
	// customized CA needs CommonName, Country, Organization and
	// OrganizationalUnit.
	CommonName         string
	Country            string
	PostalCode         string
	Province           string
	Locality           string
	StreetAddress      string
	Organization       string
	OrganizationalUnit string
}

// Custom reports whether any subject field was set.
func (o CAOptions) Custom() bool {
	return o.CommonName != "" || o.Country != "" || o.PostalCode != "" || o.Province != "" ||
		o.Locality != "" || o.StreetAddress != "" || o.Organization != "" || o.OrganizationalUnit != ""
}

// GenerateCA makes a self-signed CA with a new P-256 key and returns
// the certificate and the key, PEM-encoded.
func GenerateCA(o CAOptions) (certPEM, keyPEM string, err error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return "", "", err
	}
	serial, err := newSerial()
	if err != nil {
		return "", "", err
	}
	if o.Days == 0 {
		o.Days = 1825
	}
	if o.Days < 0 {
		return "", "", fmt.Errorf("days %d is not allowed: must be positive", o.Days)
	}
	if o.Custom() {
		for _, f := range []struct{ name, v string }{
			{"common name", o.CommonName}, {"country", o.Country},
			{"organization", o.Organization}, {"organizational unit", o.OrganizationalUnit},
		} {
			if f.v == "" {
				return "", "", fmt.Errorf("%s value not provided", f.name)
			}
		}
	} else {
		// Nomad's default subject, so tools that show a CA's subject
		// show what they would for Nomad's.
		o.CommonName, o.Country, o.PostalCode, o.Province = "Nomad Agent CA", "US", "94105", "CA"
		o.Locality, o.StreetAddress = "San Francisco", "101 Second Street"
		o.Organization, o.OrganizationalUnit = "HashiCorp Inc.", "Nomad"
	}
	id, err := keyID(key.Public())
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			CommonName:         fmt.Sprintf("%s %d", o.CommonName, serial),
			Country:            []string{o.Country},
			PostalCode:         []string{o.PostalCode},
			Province:           []string{o.Province},
			Locality:           []string{o.Locality},
			StreetAddress:      []string{o.StreetAddress},
			Organization:       []string{o.Organization},
			OrganizationalUnit: []string{o.OrganizationalUnit},
		},
		BasicConstraintsValid: true,
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		NotBefore:             now,
		NotAfter:              now.AddDate(0, 0, o.Days),
		SubjectKeyId:          id,
		AuthorityKeyId:        id,
	}
	if len(o.PermittedDNSDomains) > 0 {
		tmpl.PermittedDNSDomainsCritical = true
		tmpl.PermittedDNSDomains = o.PermittedDNSDomains
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return "", "", fmt.Errorf("error generating CA certificate: %w", err)
	}
	return encode("CERTIFICATE", der), keyPEM, nil
}

// CertOptions describe an agent or CLI certificate.
type CertOptions struct {
	Role   string // RoleServer, RoleClient or RoleCLI
	Region string // "" means "global"
	Domain string // "" means DefaultDomain
	Days   int    // 0 means 365
	// DNSNames and IPAddresses are added to the names every certificate
	// of the role carries.
	DNSNames    []string
	IPAddresses []net.IP
}

func (o *CertOptions) defaults() {
	if o.Region == "" {
		o.Region = "global"
	}
	if o.Domain == "" {
		o.Domain = DefaultDomain
	}
	if o.Days == 0 {
		o.Days = 365
	}
}

// Name is the certificate's common name, <role>.<region>.<domain>
// (server.global.nomad): the name verify_server_hostname checks.
func (o CertOptions) Name() string {
	o.defaults()
	return o.Role + "." + o.Region + "." + o.Domain
}

// FilePrefix is what `nomad tls cert create` names the certificate's
// files after: <region>-<role>-<domain> (global-server-nomad).
func (o CertOptions) FilePrefix() string {
	o.defaults()
	return o.Region + "-" + o.Role + "-" + o.Domain
}

// GenerateCert makes a certificate for o signed by the CA (caPEM and
// its key caKeyPEM) with a new P-256 key, and returns it and its key,
// PEM-encoded. Server and client certificates name the role's name,
// localhost and 127.0.0.1; CLI certificates the role's name and
// localhost. All may serve and authenticate as a client of TLS, as
// agents do both.
func GenerateCert(caPEM, caKeyPEM string, o CertOptions) (certPEM, keyPEM string, err error) {
	o.defaults()
	switch o.Role {
	case RoleServer, RoleClient, RoleCLI:
	default:
		return "", "", fmt.Errorf("certificate role %q is not allowed: must be server, client or cli", o.Role)
	}
	if o.Days < 0 {
		return "", "", fmt.Errorf("days %d is not allowed: must be positive", o.Days)
	}
	ca, err := ParseCert(caPEM)
	if err != nil {
		return "", "", fmt.Errorf("parse CA certificate: %w", err)
	}
	signer, err := ParseSigner(caKeyPEM)
	if err != nil {
		return "", "", fmt.Errorf("parse CA key: %w", err)
	}
	key, keyPEM, err := newKey()
	if err != nil {
		return "", "", err
	}
	serial, err := newSerial()
	if err != nil {
		return "", "", err
	}
	id, err := keyID(key.Public())
	if err != nil {
		return "", "", err
	}
	dns := append(append([]string(nil), o.DNSNames...), o.Name(), "localhost")
	ips := append([]net.IP(nil), o.IPAddresses...)
	if o.Role != RoleCLI {
		ips = append(ips, net.ParseIP("127.0.0.1"))
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: o.Name()},
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		NotBefore:             now,
		NotAfter:              now.AddDate(0, 0, o.Days),
		SubjectKeyId:          id,
		DNSNames:              dns,
		IPAddresses:           ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), signer)
	if err != nil {
		return "", "", fmt.Errorf("error generating certificate: %w", err)
	}
	certPEM = encode("CERTIFICATE", der)
	if err := Verify(caPEM, certPEM, o.Name()); err != nil {
		return "", "", err
	}
	return certPEM, keyPEM, nil
}

// Verify checks that certPEM was signed by caPEM and is valid for name.
func Verify(caPEM, certPEM, name string) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(caPEM)) {
		return errors.New("failed to parse root certificate")
	}
	cert, err := ParseCert(certPEM)
	if err != nil {
		return err
	}
	_, err = cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

// ParseCert reads the first certificate of a PEM text.
func ParseCert(pemText string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("no PEM-encoded data found")
	}
	if block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("first PEM block is %s, not CERTIFICATE", block.Type)
	}
	return x509.ParseCertificate(block.Bytes)
}

// ParseSigner reads a private key (EC, PKCS#1 RSA or PKCS#8) from the
// first block of a PEM text.
func ParseSigner(pemText string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("no PEM-encoded data found")
	}
	switch block.Type {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, fmt.Errorf("private key of type %T cannot sign", k)
	}
	return nil, fmt.Errorf("unknown PEM block type for a signing key: %s", block.Type)
}

func newKey() (crypto.Signer, string, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("error generating ECDSA private key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, "", fmt.Errorf("error marshaling ECDSA private key: %w", err)
	}
	return k, encode("EC PRIVATE KEY", der), nil
}

// newSerial is a random 128-bit serial number.
func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// keyID identifies a public key by the SHA-256 of its DER form.
func keyID(pub crypto.PublicKey) ([]byte, error) {
	switch pub.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey:
	default:
		return nil, fmt.Errorf("invalid key type: %T", pub)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return sum[:], nil
}

func encode(typ string, der []byte) string {
	var buf bytes.Buffer
	_ = pem.Encode(&buf, &pem.Block{Type: typ, Bytes: der})
	return buf.String()
}
