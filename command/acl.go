package command

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The acl commands: bootstrap, policies and tokens, with Nomad's flags and
// output.

const aclBootstrapUsage = `
Usage: nomad acl bootstrap [options] [<path>]

  Bootstrap is used to bootstrap the ACL system and get an initial token.
  With <path> (or "-" for stdin), the file holds the secret ID to use for
  the bootstrap token instead of a generated one.
`

func runACLBootstrap(args []string, s Streams) int {
	var (
		af   apiFlags
		json bool
		tmpl string
	)
	fs := newFlagSet("acl bootstrap", s.Stderr, aclBootstrapUsage)
	af.register(fs)
	fs.BoolVar(&json, "json", false, "Output the bootstrap response in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the bootstrap response using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes up to one argument: <path>")
		return 1
	}
	secret := ""
	if fs.NArg() == 1 {
		raw, err := readInput(fs.Arg(0), s.Stdin)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error reading provided token: %v\n", err)
			return 1
		}
		secret = strings.TrimSpace(string(raw))
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	token, _, err := client.ACLTokens().BootstrapOpts(secret, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error bootstrapping: %s\n", err)
		return 1
	}
	return outputOr(s, json, tmpl, token, func() { outputACLToken(s.Stdout, token) })
}

// outputOr prints v as JSON or through a template when asked, otherwise
// calls human.
func outputOr(s Streams, json bool, tmpl string, v any, human func()) int {
	if done, code := outputFormat(s.Stdout, s.Stderr, json, tmpl, v); done {
		return code
	}
	human()
	return 0
}

func outputACLToken(w io.Writer, token *api.ACLToken) {
	expiry := "<none>"
	if token.ExpirationTime != nil && !token.ExpirationTime.IsZero() {
		expiry = token.ExpirationTime.String()
	}
	kv := []string{
		"Accessor ID|" + token.AccessorID,
		"Secret ID|" + token.SecretID,
		"Name|" + token.Name,
		"Type|" + token.Type,
		fmt.Sprintf("Global|%v", token.Global),
		fmt.Sprintf("Create Time|%v", token.CreateTime),
		"Expiry Time |" + expiry,
		fmt.Sprintf("Create Index|%d", token.CreateIndex),
		fmt.Sprintf("Modify Index|%d", token.ModifyIndex),
	}
	if token.Type == "management" {
		kv = append(kv, "Policies|n/a", "Roles|n/a")
		fmt.Fprintln(w, formatKV(kv))
		return
	}
	kv = append(kv, fmt.Sprintf("Policies|%v", token.Policies))
	roles := []string{"<none>"}
	if len(token.Roles) > 0 {
		roles = []string{"ID|Name"}
		for _, r := range token.Roles {
			roles = append(roles, r.ID+"|"+r.Name)
		}
	}
	fmt.Fprintln(w, formatKV(kv))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Roles\n%s\n", formatList(roles))
}

const aclPolicyApplyUsage = `
Usage: nomad acl policy apply [options] <name> <path>

  Apply is used to create or update an ACL policy. The policy is
  sourced from <path> or from stdin if path is "-".
`

func runACLPolicyApply(args []string, s Streams) int {
	var (
		af          apiFlags
		description string
	)
	// Nomad's -job, -group and -task attach a policy to workload
	// identities, which carry no ACL policies in nomadq: they are not
	// defined, so the flag parser refuses them by name.
	fs := newFlagSet("acl policy apply", s.Stderr, aclPolicyApplyUsage)
	af.register(fs)
	fs.StringVar(&description, "description", "", "Specifies a human readable description for the policy")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(s.Stderr, "This command takes two arguments: <name> and <path>")
		return 1
	}
	raw, err := readInput(fs.Arg(1), s.Stdin)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading policy: %v\n", err)
		return 1
	}
	policy := &api.ACLPolicy{Name: fs.Arg(0), Description: description, Rules: string(raw)}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if _, err := client.ACLPolicies().Upsert(policy, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error writing ACL policy: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Successfully wrote %q ACL policy!\n", policy.Name)
	return 0
}

const aclPolicyListUsage = `
Usage: nomad acl policy list [options]

  List is used to list available ACL policies.
`

func runACLPolicyList(args []string, s Streams) int {
	var (
		af   apiFlags
		json bool
		tmpl string
	)
	fs := newFlagSet("acl policy list", s.Stderr, aclPolicyListUsage)
	af.register(fs)
	fs.BoolVar(&json, "json", false, "Output the ACL policies in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL policies using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	policies, _, err := client.ACLPolicies().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving ACL policies: %s\n", err)
		return 1
	}
	return outputOr(s, json, tmpl, policies, func() {
		if len(policies) == 0 {
			fmt.Fprintln(s.Stdout, "No policies found")
			return
		}
		rows := []string{"Name|Description"}
		for _, p := range policies {
			rows = append(rows, p.Name+"|"+p.Description)
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
	})
}

const aclPolicyInfoUsage = `
Usage: nomad acl policy info [options] <name>

  Info is used to fetch information on an existing ACL policy.
`

func runACLPolicyInfo(args []string, s Streams) int {
	var (
		af   apiFlags
		json bool
		tmpl string
	)
	fs := newFlagSet("acl policy info", s.Stderr, aclPolicyInfoUsage)
	af.register(fs)
	fs.BoolVar(&json, "json", false, "Output the ACL policy in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL policy using a Go template")
	client, ok := parseOneArg(fs, &af, args, "<name>", s)
	if !ok {
		return 1
	}
	policy, _, err := client.ACLPolicies().Info(fs.Arg(0), nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error fetching ACL policy: %s\n", err)
		return 1
	}
	return outputOr(s, json, tmpl, policy, func() {
		kv := []string{
			"Name|" + policy.Name,
			"Description|" + policy.Description,
			fmt.Sprintf("CreateIndex|%v", policy.CreateIndex),
			fmt.Sprintf("ModifyIndex|%v", policy.ModifyIndex),
		}
		out := formatKV(kv) + "\n\nRules\n\n" + policy.Rules
		fmt.Fprintln(s.Stdout, out)
	})
}

const aclPolicyDeleteUsage = `
Usage: nomad acl policy delete <name>

  Delete is used to delete an existing ACL policy.
`

func runACLPolicyDelete(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("acl policy delete", s.Stderr, aclPolicyDeleteUsage)
	af.register(fs)
	client, ok := parseOneArg(fs, &af, args, "<name>", s)
	if !ok {
		return 1
	}
	if _, err := client.ACLPolicies().Delete(fs.Arg(0), nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error deleting ACL policy: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Successfully deleted %q ACL policy!\n", fs.Arg(0))
	return 0
}

const aclTokenCreateUsage = `
Usage: nomad acl token create [options]

  Create is used to issue new ACL tokens. Requires a management token.
`

func runACLTokenCreate(args []string, s Streams) int {
	return aclTokenWrite("acl token create", aclTokenCreateUsage, args, s)
}

const aclTokenUpdateUsage = `
Usage: nomad acl token update [options] <token_accessor_id>

  Update is used to update an existing ACL token. Requires a management
  token.
`

func runACLTokenUpdate(args []string, s Streams) int {
	return aclTokenWrite("acl token update", aclTokenUpdateUsage, args, s)
}

func aclTokenWrite(name, usage string, args []string, s Streams) int {
	var (
		af                           apiFlags
		tokName, tokType, ttl        string
		global, json                 bool
		tmpl                         string
		policies, roleIDs, roleNames stringList
	)
	update := name == "acl token update"
	fs := newFlagSet(name, s.Stderr, usage)
	af.register(fs)
	fs.StringVar(&tokName, "name", "", "Sets the human readable name for the ACL token")
	fs.StringVar(&tokType, "type", "client", "Sets the type of token: client or management")
	fs.BoolVar(&global, "global", false, "Toggles the global mode of the token")
	fs.Var(&policies, "policy", "Specifies a policy to associate with the token (repeatable)")
	fs.Var(&roleIDs, "role-id", "ID of a role to link to the token (repeatable)")
	fs.Var(&roleNames, "role-name", "Name of a role to link to the token (repeatable)")
	if !update {
		fs.StringVar(&ttl, "ttl", "", "Time-to-live of the token, e.g. \"8h\"")
	}
	fs.BoolVar(&json, "json", false, "Output the ACL token in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL token using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	var token *api.ACLToken
	if update {
		if fs.NArg() != 1 {
			fmt.Fprintln(s.Stderr, "This command takes one argument: <token_accessor_id>")
			return 1
		}
		token, _, err = client.ACLTokens().Info(fs.Arg(0), nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error fetching token: %s\n", err)
			return 1
		}
		if isSet(fs, "name") {
			token.Name = tokName
		}
		if isSet(fs, "type") {
			token.Type = tokType
		}
		if isSet(fs, "global") {
			token.Global = global
		}
		if len(policies) > 0 {
			token.Policies = policies
		}
	} else {
		if fs.NArg() != 0 {
			fmt.Fprintln(s.Stderr, "This command takes no arguments")
			return 1
		}
		token = &api.ACLToken{Name: tokName, Type: tokType, Policies: policies, Global: global}
		if ttl != "" {
			d, err := time.ParseDuration(ttl)
			if err != nil {
				fmt.Fprintf(s.Stderr, "Failed to parse TTL as time duration: %s\n", err)
				return 1
			}
			token.ExpirationTTL = d
		}
	}
	for _, id := range roleIDs {
		token.Roles = append(token.Roles, &api.ACLTokenRoleLink{ID: id})
	}
	for _, n := range roleNames {
		token.Roles = append(token.Roles, &api.ACLTokenRoleLink{Name: n})
	}
	var out *api.ACLToken
	if update {
		out, _, err = client.ACLTokens().Update(token, nil)
	} else {
		out, _, err = client.ACLTokens().Create(token, nil)
	}
	if err != nil {
		verb := "creating"
		if update {
			verb = "updating"
		}
		fmt.Fprintf(s.Stderr, "Error %s token: %s\n", verb, err)
		return 1
	}
	return outputOr(s, json, tmpl, out, func() { outputACLToken(s.Stdout, out) })
}

const aclTokenListUsage = `
Usage: nomad acl token list [options]

  List is used to list existing ACL tokens. Requires a management token.
`

func runACLTokenList(args []string, s Streams) int {
	var (
		af   apiFlags
		json bool
		tmpl string
	)
	fs := newFlagSet("acl token list", s.Stderr, aclTokenListUsage)
	af.register(fs)
	fs.BoolVar(&json, "json", false, "Output the ACL tokens in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL tokens using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	tokens, _, err := client.ACLTokens().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving ACL tokens: %s\n", err)
		return 1
	}
	return outputOr(s, json, tmpl, tokens, func() {
		if len(tokens) == 0 {
			fmt.Fprintln(s.Stdout, "No tokens found")
			return
		}
		rows := []string{"Name|Type|Global|Accessor ID|Expired"}
		for _, t := range tokens {
			expired := t.ExpirationTime != nil && !t.ExpirationTime.IsZero() && t.ExpirationTime.Before(time.Now().UTC())
			rows = append(rows, fmt.Sprintf("%s|%s|%t|%s|%v", t.Name, t.Type, t.Global, t.AccessorID, expired))
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
	})
}

const aclTokenInfoUsage = `
Usage: nomad acl token info [options] <token_accessor_id>

  Info is used to fetch information on an existing ACL token.
`

func runACLTokenInfo(args []string, s Streams) int {
	return aclTokenRead("acl token info", aclTokenInfoUsage, args, s)
}

const aclTokenSelfUsage = `
Usage: nomad acl token self [options]

  Self is used to fetch information about the currently set ACL token.
`

func runACLTokenSelf(args []string, s Streams) int {
	return aclTokenRead("acl token self", aclTokenSelfUsage, args, s)
}

func aclTokenRead(name, usage string, args []string, s Streams) int {
	var (
		af   apiFlags
		json bool
		tmpl string
	)
	self := name == "acl token self"
	fs := newFlagSet(name, s.Stderr, usage)
	af.register(fs)
	fs.BoolVar(&json, "json", false, "Output the ACL token in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL token using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if self && fs.NArg() != 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return 1
	}
	if !self && fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <token_accessor_id>")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	var token *api.ACLToken
	if self {
		token, _, err = client.ACLTokens().Self(nil)
	} else {
		token, _, err = client.ACLTokens().Info(fs.Arg(0), nil)
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error fetching token: %s\n", err)
		return 1
	}
	return outputOr(s, json, tmpl, token, func() { outputACLToken(s.Stdout, token) })
}

const aclTokenDeleteUsage = `
Usage: nomad acl token delete <token_accessor_id>

  Delete is used to delete an existing ACL token. Requires a management
  token.
`

func runACLTokenDelete(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("acl token delete", s.Stderr, aclTokenDeleteUsage)
	af.register(fs)
	client, ok := parseOneArg(fs, &af, args, "<token_accessor_id>", s)
	if !ok {
		return 1
	}
	if _, err := client.ACLTokens().Delete(fs.Arg(0), nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error deleting token: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Token %s successfully deleted\n", fs.Arg(0))
	return 0
}
