package command

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// stringList is a repeatable string flag (-var a=1 -var b=2).
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// apiFlags are the connection flags every command that talks to an agent
// accepts; unset flags fall back to NOMAD_ADDR, NOMAD_REGION and
// NOMAD_NAMESPACE as the official client reads them.
type apiFlags struct {
	address   string
	region    string
	namespace string
	token     string

	// TLS, over NOMAD_CACERT, NOMAD_CAPATH, NOMAD_CLIENT_CERT,
	// NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME and NOMAD_SKIP_VERIFY.
	caCert        string
	caPath        string
	clientCert    string
	clientKey     string
	tlsServerName string
	tlsSkipVerify bool
}

func (f *apiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.address, "address", "", "The address of the Nomad server (overrides NOMAD_ADDR)")
	fs.StringVar(&f.region, "region", "", "The region of the Nomad servers to forward commands to (overrides NOMAD_REGION)")
	fs.StringVar(&f.namespace, "namespace", "", "The target namespace for queries and actions (overrides NOMAD_NAMESPACE)")
	fs.StringVar(&f.token, "token", "", "The SecretID of an ACL token to use to authenticate API requests with (overrides NOMAD_TOKEN)")
	fs.StringVar(&f.caCert, "ca-cert", "", "Path to a PEM encoded CA cert file to use to verify the Nomad server SSL certificate (overrides NOMAD_CACERT)")
	fs.StringVar(&f.caPath, "ca-path", "", "Path to a directory of PEM encoded CA cert files to verify the Nomad server SSL certificate (overrides NOMAD_CAPATH)")
	fs.StringVar(&f.clientCert, "client-cert", "", "Path to a PEM encoded client certificate for TLS authentication to the Nomad server (overrides NOMAD_CLIENT_CERT)")
	fs.StringVar(&f.clientKey, "client-key", "", "Path to an unencrypted PEM encoded private key matching the client certificate (overrides NOMAD_CLIENT_KEY)")
	fs.StringVar(&f.tlsServerName, "tls-server-name", "", "The server name to use as the SNI host when connecting via TLS (overrides NOMAD_TLS_SERVER_NAME)")
	fs.BoolVar(&f.tlsSkipVerify, "tls-skip-verify", false, "Do not verify TLS certificate; not recommended (also set by NOMAD_SKIP_VERIFY)")
}

func (f *apiFlags) client() (*api.Client, error) {
	c, err := api.NewClient(f.config())
	if err != nil {
		return nil, fmt.Errorf("error initializing client: %w", err)
	}
	return c, nil
}

// config is the client configuration the other commands use: the
// environment, then the flags.
func (f *apiFlags) config() *api.Config {
	cfg := api.DefaultConfig()
	if f.address != "" {
		cfg.Address = f.address
	}
	if f.region != "" {
		cfg.Region = f.region
	}
	if f.namespace != "" {
		cfg.Namespace = f.namespace
	}
	if f.token != "" {
		cfg.SecretID = f.token
	}
	t := cfg.TLSConfig
	for _, o := range []struct{ flag, into *string }{
		{&f.caCert, &t.CACert}, {&f.caPath, &t.CAPath}, {&f.clientCert, &t.ClientCert},
		{&f.clientKey, &t.ClientKey}, {&f.tlsServerName, &t.TLSServerName},
	} {
		if *o.flag != "" {
			*o.into = *o.flag
		}
	}
	if f.tlsSkipVerify {
		t.Insecure = true
	}
	return cfg
}

// newFlagSet returns a flag set that reports errors to w and does not exit.
// When w is a description being taken (describe), the flag set is
// recorded in it too.
func newFlagSet(name string, w io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(w, strings.TrimSpace(usage))
		fmt.Fprintln(w, "\nOptions:")
		fs.PrintDefaults()
	}
	if d, ok := w.(*description); ok {
		d.sets = append(d.sets, fs)
	}
	return fs
}

// description collects what a command prints for -help and the flag sets
// it builds on the way.
type description struct {
	bytes.Buffer
	sets []*flag.FlagSet
}

// describe runs a command with -help to learn its help text and flags:
// every command builds its flag set and parses it before anything else,
// and -help stops it at the parse. The text is the one the command prints
// for -help itself, so help reads the same whoever prints it.
func describe(run commandFunc, stdin io.Reader) (string, []*flag.FlagSet) {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	d := &description{}
	run([]string{"-help"}, Streams{Stdin: stdin, Stdout: io.Discard, Stderr: d})
	return strings.TrimRight(d.String(), "\n"), d.sets
}

// isSet reports whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// parseNoArgs parses the flags of a command that takes no arguments and
// builds its API client; on a parse error, an argument or a client error
// it prints the problem and reports false.
func parseNoArgs(fs *flag.FlagSet, af *apiFlags, args []string, s Streams) (*api.Client, bool) {
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return nil, false
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return nil, false
	}
	return client, true
}

// parseOneArg is parseNoArgs for the commands that take one argument
// (an ID or a name, argName in the message), which they read with
// fs.Arg(0).
func parseOneArg(fs *flag.FlagSet, af *apiFlags, args []string, argName string, s Streams) (*api.Client, bool) {
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(s.Stderr, "This command takes one argument: %s\n", argName)
		return nil, false
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return nil, false
	}
	return client, true
}
