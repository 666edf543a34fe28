package command

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/hashicorp/nomad/api"
)

func init() {
	commands["operator api"] = commandInfo{runOperatorAPI, "Query Nomad's HTTP API"}
}

const operatorAPIUsage = `
Usage: nomad operator api [options] <path>

  api is a utility command for accessing Nomad's HTTP API and is inspired by
  the popular curl command line tool. The response body is copied to
  standard output as it arrives, so streams such as
  "nomad operator api /v1/event/stream" print event by event.

  The region and namespace of the client configuration are added to the
  query unless the path sets them; NOMAD_TOKEN is sent as X-Nomad-Token.

  -filter <query>
    Specifies an expression used to filter query results.

  -H <Header>
    Adds an additional HTTP header to the request ("Key: Value"). May be
    specified more than once. These headers take precedence over
    automatically set ones such as X-Nomad-Token.

  -verbose
    Output extra information to stderr similar to curl's --verbose flag.

  -X <HTTP Method>
    HTTP method of request. If there is data piped to stdin, then the method
    defaults to POST. Otherwise the method defaults to GET.

  Nomad's -dryrun is not supported.
`

// headerList collects -H flags.
type headerList struct{ h http.Header }

func (l *headerList) String() string { return "" }

func (l *headerList) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("Headers must be in the form 'Key: Value' but found: %q", v)
	}
	l.h.Add(k, strings.TrimSpace(val))
	return nil
}

func runOperatorAPI(args []string, s Streams) int {
	var af apiFlags
	var method, filter string
	var verbose, dryrun bool
	headers := &headerList{h: http.Header{}}
	fs := newFlagSet("operator api", s.Stderr, operatorAPIUsage)
	af.register(fs)
	fs.StringVar(&method, "X", "", "HTTP method of request")
	fs.StringVar(&filter, "filter", "", "Expression used to filter query results")
	fs.BoolVar(&verbose, "verbose", false, "Output extra information to stderr")
	fs.Var(headers, "H", "Additional HTTP header, 'Key: Value'")
	fs.BoolVar(&dryrun, "dryrun", false, "Not supported by nomadq")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if dryrun {
		fmt.Fprintln(s.Stderr, "The -dryrun flag is not supported by nomadq: run the request, or use -verbose to see it")
		return 1
	}
	switch fs.NArg() {
	case 0:
		fmt.Fprintln(s.Stderr, "A path or URL is required")
		return 1
	case 1:
	default:
		fmt.Fprintf(s.Stderr, "operator api accepts exactly 1 argument, but %d arguments were found\n", fs.NArg())
		return 1
	}
	say := func(format string, a ...any) {
		if verbose {
			fmt.Fprintf(s.Stderr, format+"\n", a...)
		}
	}

	var body io.Reader
	if hasPipedInput(s.Stdin) {
		say("* Reading request body from stdin.")
		raw, err := io.ReadAll(s.Stdin)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error reading stdin: %v\n", err)
			return 1
		}
		// Empty input is no body: the method stays GET.
		if len(raw) > 0 {
			body = bytes.NewReader(raw)
			if method == "" {
				method = http.MethodPost
			}
		}
	}
	if method == "" {
		method = http.MethodGet
	}

	cfg := af.config()
	httpClient := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if err := api.ConfigureTLS(httpClient, cfg.TLSConfig); err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %v\n", err)
		return 1
	}
	u, err := apiURL(cfg, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error turning path into URL: %v\n", err)
		return 1
	}
	q := u.Query()
	if q.Get("region") == "" && cfg.Region != "" {
		q.Set("region", cfg.Region)
	}
	if q.Get("namespace") == "" && cfg.Namespace != "" {
		q.Set("namespace", cfg.Namespace)
	}
	if filter != "" {
		q.Set("filter", filter)
	}
	u.RawQuery = q.Encode()

	req, err := http.NewRequest(method, u.String(), body)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error making request: %v\n", err)
		return 1
	}
	if cfg.SecretID != "" {
		req.Header.Set("X-Nomad-Token", cfg.SecretID)
	}
	for k, vals := range headers.h {
		req.Header[k] = vals
	}
	say("> %s %s %s", method, req.URL.RequestURI(), req.Proto)
	for k, vals := range req.Header {
		for _, v := range vals {
			say("> %s: %s", k, v)
		}
	}
	say(">")
	say("* Sending request and receiving response...")
	resp, err := httpClient.Do(req)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error performing request: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	say("< %s %s", resp.Proto, resp.Status)
	for k, vals := range resp.Header {
		for _, v := range vals {
			say("< %s: %s", k, v)
		}
	}
	if n, err := io.Copy(flushWriter{s.Stdout}, resp.Body); err != nil {
		fmt.Fprintf(s.Stderr, "Error reading response after %d bytes: %v\n", n, err)
		return 1
	}
	return 0
}

// apiURL turns a path ("/v1/jobs") or URL into the URL to request; a path
// goes to the configured agent address.
func apiURL(cfg *api.Config, arg string) (*url.URL, error) {
	base, err := url.Parse(cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("unable to parse configured address: %v", err)
	}
	if !strings.HasPrefix(arg, "http://") && !strings.HasPrefix(arg, "https://") {
		u, err := url.Parse(arg)
		if err != nil {
			return nil, err
		}
		u.Scheme, u.Host = base.Scheme, base.Host
		if !strings.HasPrefix(u.Path, "/") {
			u.Path = "/" + u.Path
		}
		return u, nil
	}
	return url.Parse(arg)
}

// hasPipedInput reports whether stdin holds data to send: a pipe or a
// file, not a terminal. Readers that are not files (tests) count when
// non-nil.
func hasPipedInput(r io.Reader) bool {
	if r == nil {
		return false
	}
	f, ok := r.(*os.File)
	if !ok {
		return true
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice == 0 && (fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular())
}

// flushWriter writes through at once, so a stream reaches a pipe line by
// line.
type flushWriter struct{ w io.Writer }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if fl, ok := f.w.(interface{ Sync() error }); ok && n > 0 {
		_ = fl.Sync()
	}
	return n, err
}
