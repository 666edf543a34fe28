package command

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/cap/util"
	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
)

const uiUsage = `
Usage: nomad ui [options] [<identifier>]

  Open the web UI in the default browser. With an identifier (a job,
  allocation or node ID, or a prefix of one) the UI opens on that object.

  -authenticate: exchange your ACL token for a one-time token that the
    UI swaps for your token when it opens, if ACLs are enabled.

  -show-url: print the UI's URL instead of opening a browser.
`

// uiContexts are the objects the UI has a page for, in the order a
// prefix is resolved.
var uiContexts = []contexts.Context{contexts.Jobs, contexts.Allocs, contexts.Nodes}

func runUI(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("ui", s.Stderr, uiUsage)
	af.register(fs)
	authenticate := fs.Bool("authenticate", false, "Exchange your ACL token for a one-time token in the web UI")
	showURL := fs.Bool("show-url", false, "Show the web UI's URL instead of opening it in the default browser")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes no or one optional argument, [<identifier>]")
		return 1
	}
	cfg := af.config()
	client, err := api.NewClient(cfg)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	u, err := url.Parse(client.Address())
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error parsing Nomad address %q: %s\n", client.Address(), err)
		return 1
	}
	u.Path = "/ui/jobs"
	q := url.Values{}
	if cfg.Namespace != "" {
		q.Set("namespace", cfg.Namespace)
	}
	if cfg.Region != "" {
		q.Set("region", cfg.Region)
	}
	if fs.NArg() == 1 {
		path, code := uiPath(client, fs.Arg(0), cfg.Namespace, s)
		if code != 0 {
			return code
		}
		u.Path = path
	}
	var ott string
	if *authenticate {
		tok, _, err := client.ACLTokens().UpsertOneTimeToken(nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Could not get one-time token: %s\n", err)
			return 1
		}
		ott = tok.OneTimeSecretID
	}
	u.RawQuery = q.Encode()
	shown := u.String()
	if ott != "" {
		q.Set("ott", ott)
		u.RawQuery = q.Encode()
	}
	if *showURL {
		fmt.Fprintf(s.Stdout, "URL for web UI: %s\n", u.String())
		return 0
	}
	if ott != "" {
		fmt.Fprintf(s.Stdout, "Opening URL %q with one-time token\n", shown)
	} else {
		fmt.Fprintf(s.Stdout, "Opening URL %q\n", shown)
	}
	if err := util.OpenURL(u.String()); err != nil {
		fmt.Fprintf(s.Stderr, "Error opening URL: %s\n", err)
		return 1
	}
	return 0
}

// uiPath resolves id (or a prefix of it) to the UI page of its job,
// allocation or node, as the search answers it.
func uiPath(client *api.Client, id, ns string, s Streams) (string, int) {
	res, _, err := client.Search().PrefixSearch(id, contexts.All, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying search with id: %q\n", err)
		return "", 1
	}
	var match contexts.Context
	var full string
	found := 0
	for _, ctx := range uiContexts {
		ids := res.Matches[ctx]
		switch {
		case len(ids) > 0 && ids[0] == id:
			match, full, found = ctx, id, 1
		case len(ids) == 1:
			match, full = ctx, ids[0]
			found++
		case len(ids) > 1:
			found += 2
		}
		if len(ids) > 0 && ids[0] == id {
			break
		}
	}
	if found > 1 {
		fmt.Fprintf(s.Stderr, "Multiple matches found for id %q\n", id)
		for _, ctx := range uiContexts {
			if ids := res.Matches[ctx]; len(ids) > 0 {
				fmt.Fprintf(s.Stderr, "\n%s:\n%s\n", strings.ToUpper(string(ctx[:1]))+string(ctx[1:]), strings.Join(ids, ", "))
			}
		}
		return "", 1
	}
	switch match {
	case contexts.Jobs:
		if ns != "" && ns != "default" {
			return "/ui/jobs/" + url.PathEscape(full) + "@" + url.PathEscape(ns), 0
		}
		return "/ui/jobs/" + url.PathEscape(full), 0
	case contexts.Allocs:
		return "/ui/allocations/" + full, 0
	case contexts.Nodes:
		return "/ui/clients/" + full, 0
	}
	fmt.Fprintf(s.Stderr, "Unable to resolve ID: %q\n", id)
	return "", 1
}
