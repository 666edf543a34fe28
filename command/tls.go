package command

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/nomadq/nomadq/tlsutil"
)

const tlsCACreateUsage = `
Usage: nomad tls ca create [options]

  Create a new certificate authority. It writes <domain>-agent-ca.pem and
  <domain>-agent-ca-key.pem to the current directory.
`

// runTLSCACreate is `nomad tls ca create`.
func runTLSCACreate(args []string, s Streams) int {
	var (
		o          tlsutil.CAOptions
		domain     string
		constraint bool
		additional stringList
	)
	fs := newFlagSet("tls ca create", s.Stderr, tlsCACreateUsage)
	fs.Var(&additional, "additional-domain", "Add a DNS zone the CA may sign names in; with -name-constraint. May be repeated")
	fs.StringVar(&o.CommonName, "common-name", "", "Common Name of the CA (default \"Nomad Agent CA\")")
	fs.StringVar(&o.Country, "country", "", "Country of the CA (default \"US\")")
	fs.IntVar(&o.Days, "days", 1825, "Number of days the CA is valid for")
	fs.StringVar(&domain, "domain", tlsutil.DefaultDomain, "Domain of the Nomad cluster; with -name-constraint")
	fs.StringVar(&o.Locality, "locality", "", "Locality of the CA")
	fs.BoolVar(&constraint, "name-constraint", false, "Restrict the CA to -domain, -additional-domain and localhost")
	fs.StringVar(&o.Organization, "organization", "", "Organization of the CA")
	fs.StringVar(&o.OrganizationalUnit, "organizational-unit", "", "Organizational Unit of the CA")
	fs.StringVar(&o.PostalCode, "postal-code", "", "Postal Code of the CA")
	fs.StringVar(&o.Province, "province", "", "Province of the CA")
	fs.StringVar(&o.StreetAddress, "street-address", "", "Street Address of the CA")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return 1
	}
	if o.Custom() {
		for _, f := range []struct{ flag, v string }{
			{"-common-name", o.CommonName}, {"-country", o.Country},
			{"-organization", o.Organization}, {"-organizational-unit", o.OrganizationalUnit},
		} {
			if f.v == "" {
				fmt.Fprintf(s.Stderr, "Please provide the %s flag when customizing the CA\n", f.flag)
				return 1
			}
		}
	}
	switch {
	case domain != tlsutil.DefaultDomain && !constraint:
		fmt.Fprintln(s.Stderr, "Please provide the -name-constraint flag to use a custom domain constraint")
		return 1
	case domain == tlsutil.DefaultDomain && constraint:
		fmt.Fprintln(s.Stderr, "Please provide the -domain flag if you want to enable custom domain constraints")
		return 1
	case len(additional) > 0 && !constraint:
		fmt.Fprintln(s.Stderr, "Please provide the -name-constraint flag to use a custom domain constraints")
		return 1
	case o.Days <= 0:
		fmt.Fprintf(s.Stderr, "-days %d is not allowed: must be positive\n", o.Days)
		return 1
	}
	if constraint {
		o.PermittedDNSDomains = append([]string{domain, "localhost", tlsutil.DefaultDomain}, additional...)
	}
	certFile, keyFile := domain+"-agent-ca.pem", domain+"-agent-ca-key.pem"
	if err := refuseExisting(map[string]string{certFile: "CA certificate file", keyFile: "CA key file"}, certFile, keyFile); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	cert, key, err := tlsutil.GenerateCA(o)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if err := writeNew(certFile, cert, 0o644); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	fmt.Fprintln(s.Stdout, "==> CA certificate saved to: "+certFile)
	if err := writeNew(keyFile, key, 0o600); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	fmt.Fprintln(s.Stdout, "==> CA certificate key saved to: "+keyFile)
	return 0
}

const tlsCertCreateUsage = `
Usage: nomad tls cert create [options]

  Create a new TLS certificate for a Nomad server (-server), client
  (-client) or the CLI (-cli), signed by the CA. It writes
  <region>-<role>-<domain>.pem and <region>-<role>-<domain>-key.pem to the
  current directory; the region is -region or NOMAD_REGION ("global").
`

// runTLSCertCreate is `nomad tls cert create`.
func runTLSCertCreate(args []string, s Streams) int {
	var (
		af                 apiFlags
		dnsNames, ipAddrs  stringList
		caFile, keyFile    string
		server, client, cl bool
		o                  tlsutil.CertOptions
	)
	fs := newFlagSet("tls cert create", s.Stderr, tlsCertCreateUsage)
	af.register(fs)
	fs.Var(&dnsNames, "additional-dnsname", "Add a DNS name to the Subject Alternative Names; \"localhost\" is always included. May be repeated")
	fs.Var(&ipAddrs, "additional-ipaddress", "Add an IP address to the Subject Alternative Names; \"127.0.0.1\" is always included. May be repeated")
	fs.StringVar(&caFile, "ca", "#DOMAIN#-agent-ca.pem", "Path to the CA certificate")
	fs.BoolVar(&cl, "cli", false, "Generate a certificate for use with the Nomad CLI")
	fs.BoolVar(&client, "client", false, "Generate a client certificate")
	fs.IntVar(&o.Days, "days", 365, "Number of days the certificate is valid for")
	fs.StringVar(&o.Domain, "domain", tlsutil.DefaultDomain, "Domain of the certificate names")
	fs.StringVar(&keyFile, "key", "#DOMAIN#-agent-ca-key.pem", "Path to the CA key")
	fs.BoolVar(&server, "server", false, "Generate a server certificate")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return 1
	}
	switch {
	case caFile == "":
		fmt.Fprintln(s.Stderr, "Please provide the ca")
		return 1
	case keyFile == "":
		fmt.Fprintln(s.Stderr, "Please provide the key")
		return 1
	case o.Days <= 0:
		fmt.Fprintf(s.Stderr, "-days %d is not allowed: must be positive\n", o.Days)
		return 1
	}
	roles := 0
	for _, r := range []struct {
		set  bool
		role string
	}{{server, tlsutil.RoleServer}, {client, tlsutil.RoleClient}, {cl, tlsutil.RoleCLI}} {
		if r.set {
			roles++
			o.Role = r.role
		}
	}
	if roles != 1 {
		fmt.Fprintln(s.Stderr, "Please provide either -server, -client, or -cli")
		return 1
	}
	for _, d := range dnsNames {
		if d = strings.TrimSpace(d); d != "" {
			o.DNSNames = append(o.DNSNames, d)
		}
	}
	for _, a := range ipAddrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		ip := net.ParseIP(a)
		if ip == nil {
			fmt.Fprintf(s.Stderr, "-additional-ipaddress %q is not allowed: must be an IP address\n", a)
			return 1
		}
		o.IPAddresses = append(o.IPAddresses, ip)
	}
	o.Region = af.config().Region

	certFile := o.FilePrefix() + ".pem"
	pkFile := o.FilePrefix() + "-key.pem"
	if err := refuseExisting(map[string]string{certFile: "Certificate file", pkFile: "Key file"}, certFile, pkFile); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	caFile = strings.Replace(caFile, "#DOMAIN#", o.Domain, 1)
	keyFile = strings.Replace(keyFile, "#DOMAIN#", o.Domain, 1)
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading CA: %s\n", err)
		return 1
	}
	caKey, err := os.ReadFile(keyFile)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading CA key: %s\n", err)
		return 1
	}
	if server {
		fmt.Fprintln(s.Stderr, `==> WARNING: Server Certificates grants authority to become a
    server and access all state in the cluster including root keys
    and all ACL tokens. Do not distribute them to production hosts
    that are not server nodes. Store them as securely as CA keys.`)
	}
	fmt.Fprintln(s.Stdout, "==> Using CA file "+caFile+" and CA key "+keyFile)
	cert, key, err := tlsutil.GenerateCert(string(caPEM), string(caKey), o)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	what := map[string]string{tlsutil.RoleServer: "Server", tlsutil.RoleClient: "Client", tlsutil.RoleCLI: "Cli"}[o.Role]
	if err := writeNew(certFile, cert, 0o644); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "==> %s Certificate saved to %s\n", what, certFile)
	if err := writeNew(pkFile, key, 0o600); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if o.Role == tlsutil.RoleCLI {
		what = "CLI"
	}
	fmt.Fprintf(s.Stdout, "==> %s Certificate key saved to %s\n", what, pkFile)
	return 0
}

// refuseExisting reports the first of files that already exists, as
// `nomad tls` never overwrites a certificate or key.
func refuseExisting(what map[string]string, files ...string) error {
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s '%s' already exists", what[f], f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeNew writes a new file atomically (a temporary file renamed into
// place) with perm.
func writeNew(name, content string, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

const tlsCAInfoUsage = `
Usage: nomad tls ca info <CA file>

  Show the serial number, issuer, subject, expiry and permitted DNS
  domains of a CA certificate.
`

const tlsCertInfoUsage = `
Usage: nomad tls cert info <certificate file>

  Show the serial number, issuer, subject, expiry, DNS names and IP
  addresses of a certificate.
`

// runTLSCAInfo is `nomad tls ca info`.
func runTLSCAInfo(args []string, s Streams) int {
	return tlsInfo("tls ca info", tlsCAInfoUsage, args, s, func(c *x509.Certificate) string {
		return fmt.Sprintf("Permitted DNS Domains|%s", c.PermittedDNSDomains)
	})
}

// runTLSCertInfo is `nomad tls cert info`.
func runTLSCertInfo(args []string, s Streams) int {
	return tlsInfo("tls cert info", tlsCertInfoUsage, args, s, func(c *x509.Certificate) string {
		return fmt.Sprintf("DNS Names|%s\nIP Addresses|%s", c.DNSNames, c.IPAddresses)
	})
}

// tlsInfo prints Nomad's table of a certificate file's fields; more
// adds the rows that differ between CA and certificate.
func tlsInfo(name, usage string, args []string, s Streams, more func(*x509.Certificate) string) int {
	fs := newFlagSet(name, s.Stderr, usage)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: the certificate file")
		return 1
	}
	pemText, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading certificate file: %v\n", err)
		return 1
	}
	c, err := tlsutil.ParseCert(string(pemText))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	rows := []string{
		fmt.Sprintf("Serial Number|%s", c.SerialNumber),
		fmt.Sprintf("Issuer CN|%s", c.Issuer.CommonName),
		fmt.Sprintf("Common Name|%s", c.Subject),
		fmt.Sprintf("Expiry Date|%s", c.NotAfter),
	}
	rows = append(rows, strings.Split(more(c), "\n")...)
	fmt.Fprintln(s.Stdout, formatList(rows))
	return 0
}
