package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The acl auth-method and acl binding-rule commands and nomad login, with
// Nomad's flags and output.

const aclAuthMethodCreateUsage = `
Usage: nomad acl auth-method create [options]

  Create is used to create new ACL auth methods. Use requires a management
  token. -config takes the method's configuration as JSON, "@<path>" to read
  it from a file or "-" to read it from stdin.
`

const aclAuthMethodUpdateUsage = `
Usage: nomad acl auth-method update [options] <acl_auth_method_name>

  Update is used to update an existing ACL auth method. Only the flags given
  change; use requires a management token.
`

// authMethodFlags are the flags of create and update.
type authMethodFlags struct {
	af              apiFlags
	name            string
	methodType      string
	tokenLocality   string
	tokenNameFormat string
	maxTokenTTL     time.Duration
	isDefault       bool
	config          string
	json            bool
	tmpl            string
}

func (f *authMethodFlags) register(fs *flag.FlagSet, create bool) {
	f.af.register(fs)
	if create {
		fs.StringVar(&f.name, "name", "", "Sets the name of the ACL auth method (required)")
	}
	fs.StringVar(&f.methodType, "type", "", "Sets the type of the auth method: OIDC or JWT")
	fs.StringVar(&f.tokenLocality, "token-locality", "", "Kind of token the method makes: local or global")
	fs.StringVar(&f.tokenNameFormat, "token-name-format", "", "HIL template of the names of the tokens the method makes")
	fs.DurationVar(&f.maxTokenTTL, "max-token-ttl", 0, "How long the tokens the method makes are valid for")
	fs.BoolVar(&f.isDefault, "default", false, "Makes this the default method of nomad login")
	fs.StringVar(&f.config, "config", "", "Auth method configuration in JSON, @<path> or - for stdin")
	fs.BoolVar(&f.json, "json", false, "Output the ACL auth-method in a JSON format")
	fs.StringVar(&f.tmpl, "t", "", "Format and display the ACL auth-method using a Go template")
}

// loadAuthMethodConfig reads -config: inline JSON, @path or - (stdin).
func loadAuthMethodConfig(src string, stdin io.Reader) (*api.ACLAuthMethodConfig, error) {
	raw := []byte(src)
	switch {
	case src == "-":
		b, err := readInput("-", stdin)
		if err != nil {
			return nil, fmt.Errorf("Error loading configuration: %v", err)
		}
		raw = b
	case strings.HasPrefix(src, "@"):
		b, err := readInput(src[1:], stdin)
		if err != nil {
			return nil, fmt.Errorf("Error loading configuration: %v", err)
		}
		raw = b
	}
	var c api.ACLAuthMethodConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("Unable to parse config: %v", err)
	}
	return &c, nil
}

func checkLocality(l string) error {
	if l != "global" && l != "local" {
		return fmt.Errorf("Token locality must be set to either 'local' or 'global'")
	}
	return nil
}

func checkMethodType(t string) error {
	if !slices.Contains([]string{"OIDC", "JWT"}, strings.ToUpper(t)) {
		return fmt.Errorf("ACL auth method type must be set to 'OIDC' or 'JWT'")
	}
	return nil
}

func runACLAuthMethodCreate(args []string, s Streams) int {
	var f authMethodFlags
	fs := newFlagSet("acl auth-method create", s.Stderr, aclAuthMethodCreateUsage)
	f.register(fs, true)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	fail := func(msg string) int { fmt.Fprintln(s.Stderr, msg); return 1 }
	switch {
	case fs.NArg() != 0:
		return fail("This command takes no arguments")
	case f.name == "":
		return fail("ACL auth method name must be specified using the -name flag")
	case checkLocality(f.tokenLocality) != nil:
		return fail(checkLocality(f.tokenLocality).Error())
	case f.maxTokenTTL < 1:
		return fail("Max token TTL must be set to a value between min and max TTL configured for the server.")
	case checkMethodType(f.methodType) != nil:
		return fail(checkMethodType(f.methodType).Error())
	case f.config == "":
		return fail("Must provide ACL auth method config in JSON format")
	}
	config, err := loadAuthMethodConfig(f.config, s.Stdin)
	if err != nil {
		return fail(err.Error())
	}
	client, err := f.af.client()
	if err != nil {
		return fail(err.Error())
	}
	method, _, err := client.ACLAuthMethods().Create(&api.ACLAuthMethod{
		Name: f.name, Type: strings.ToUpper(f.methodType), TokenLocality: f.tokenLocality,
		TokenNameFormat: f.tokenNameFormat, MaxTokenTTL: f.maxTokenTTL, Default: f.isDefault, Config: config,
	}, nil)
	if err != nil {
		return fail(fmt.Sprintf("Error creating ACL auth method: %v", err))
	}
	return outputOr(s, f.json, f.tmpl, method, func() { outputAuthMethod(s.Stdout, method) })
}

func runACLAuthMethodUpdate(args []string, s Streams) int {
	var f authMethodFlags
	fs := newFlagSet("acl auth-method update", s.Stderr, aclAuthMethodUpdateUsage)
	f.register(fs, false)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	fail := func(msg string) int { fmt.Fprintln(s.Stderr, msg); return 1 }
	if fs.NArg() != 1 {
		return fail("This command takes one argument: <acl_auth_method_name>")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	changed := false
	for _, name := range []string{"type", "token-locality", "token-name-format", "max-token-ttl", "config", "default"} {
		changed = changed || set[name]
	}
	if !changed {
		return fail("Please provide at least one flag to update the ACL auth method")
	}
	client, err := f.af.client()
	if err != nil {
		return fail(err.Error())
	}
	current, _, err := client.ACLAuthMethods().Get(fs.Arg(0), nil)
	if err != nil {
		return fail(fmt.Sprintf("Error when retrieving ACL auth method: %v", err))
	}
	updated := *current
	// The server redacts the client secret on reads: sending the
	// redacted value back would store it, so an update without -config
	// leaves the stored configuration alone.
	updated.Config = nil
	if set["token-locality"] {
		if err := checkLocality(f.tokenLocality); err != nil {
			return fail(err.Error())
		}
		updated.TokenLocality = f.tokenLocality
	}
	if set["token-name-format"] {
		updated.TokenNameFormat = f.tokenNameFormat
	}
	if set["type"] {
		if err := checkMethodType(f.methodType); err != nil {
			return fail(err.Error())
		}
		updated.Type = strings.ToUpper(f.methodType)
	}
	if set["max-token-ttl"] {
		if f.maxTokenTTL < 1 {
			return fail("Max token TTL must be set to a value between min and max TTL configured for the server.")
		}
		updated.MaxTokenTTL = f.maxTokenTTL
	}
	if set["default"] {
		updated.Default = f.isDefault
	}
	if set["config"] {
		if updated.Config, err = loadAuthMethodConfig(f.config, s.Stdin); err != nil {
			return fail(err.Error())
		}
	}
	method, _, err := client.ACLAuthMethods().Update(&updated, nil)
	if err != nil {
		return fail(fmt.Sprintf("Error updating ACL auth method: %v", err))
	}
	return outputOr(s, f.json, f.tmpl, method, func() { outputAuthMethod(s.Stdout, method) })
}

const aclAuthMethodListUsage = `
Usage: nomad acl auth-method list [options]

  List is used to list existing ACL auth methods.
`

func runACLAuthMethodList(args []string, s Streams) int {
	var (
		af   apiFlags
		js   bool
		tmpl string
	)
	fs := newFlagSet("acl auth-method list", s.Stderr, aclAuthMethodListUsage)
	af.register(fs)
	fs.BoolVar(&js, "json", false, "Output the ACL auth methods in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL auth methods using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	methods, _, err := client.ACLAuthMethods().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error listing ACL auth methods: %s\n", err)
		return 1
	}
	return outputOr(s, js, tmpl, methods, func() {
		if len(methods) == 0 {
			fmt.Fprintln(s.Stdout, "No ACL auth methods found")
			return
		}
		rows := []string{"Name|Type|Default"}
		for _, m := range methods {
			rows = append(rows, fmt.Sprintf("%s|%s|%v", m.Name, m.Type, m.Default))
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
	})
}

const aclAuthMethodInfoUsage = `
Usage: nomad acl auth-method info [options] <acl_auth_method_name>

  Info is used to fetch information on an existing ACL auth method. Use
  requires a management token.
`

func runACLAuthMethodInfo(args []string, s Streams) int {
	var (
		af   apiFlags
		js   bool
		tmpl string
	)
	fs := newFlagSet("acl auth-method info", s.Stderr, aclAuthMethodInfoUsage)
	af.register(fs)
	fs.BoolVar(&js, "json", false, "Output the ACL auth-method in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL auth-method using a Go template")
	client, ok := parseOneArg(fs, &af, args, "<acl_auth_method_name>", s)
	if !ok {
		return 1
	}
	method, _, err := client.ACLAuthMethods().Get(fs.Arg(0), nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading ACL auth method: %s\n", err)
		return 1
	}
	return outputOr(s, js, tmpl, method, func() { outputAuthMethod(s.Stdout, method) })
}

const aclAuthMethodDeleteUsage = `
Usage: nomad acl auth-method delete [options] <acl_auth_method_name>

  Delete is used to delete an existing ACL auth method, with its binding
  rules. Use requires a management token.
`

func runACLAuthMethodDelete(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("acl auth-method delete", s.Stderr, aclAuthMethodDeleteUsage)
	af.register(fs)
	client, ok := parseOneArg(fs, &af, args, "<acl_auth_method_name>", s)
	if !ok {
		return 1
	}
	if _, err := client.ACLAuthMethods().Delete(fs.Arg(0), nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error deleting ACL auth method: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "ACL auth method %s successfully deleted\n", fs.Arg(0))
	return 0
}

func outputAuthMethod(w io.Writer, m *api.ACLAuthMethod) {
	fmt.Fprintln(w, formatKV([]string{
		"Name|" + m.Name,
		"Type|" + m.Type,
		"Locality|" + m.TokenLocality,
		"Max Token TTL|" + m.MaxTokenTTL.String(),
		"Token Name Format|" + m.TokenNameFormat,
		fmt.Sprintf("Default|%t", m.Default),
		fmt.Sprintf("Create Index|%d", m.CreateIndex),
		fmt.Sprintf("Modify Index|%d", m.ModifyIndex),
	}))
	c := m.Config
	if c == nil {
		return
	}
	fmt.Fprintln(w, "\nAuth Method Config")
	fmt.Fprintln(w)
	fmt.Fprintln(w, formatKV([]string{
		"JWT Validation Public Keys|" + strings.Join(c.JWTValidationPubKeys, ","),
		"JWKS URL|" + c.JWKSURL,
		"OIDC Discovery URL|" + c.OIDCDiscoveryURL,
		"OIDC Client ID|" + c.OIDCClientID,
		"OIDC Client Secret|" + c.OIDCClientSecret,
		fmt.Sprintf("OIDC Enable PKCE|%t", c.OIDCEnablePKCE),
		fmt.Sprintf("OIDC Disable UserInfo|%t", c.OIDCDisableUserInfo),
		"OIDC Scopes|" + strings.Join(c.OIDCScopes, ","),
		"Bound audiences|" + strings.Join(c.BoundAudiences, ","),
		"Bound issuer|" + strings.Join(c.BoundIssuer, ","),
		"Allowed redirects URIs|" + strings.Join(c.AllowedRedirectURIs, ","),
		"Discovery CA pem|" + strings.Join(c.DiscoveryCaPem, ","),
		"JWKS CA cert|" + c.JWKSCACert,
		"Signing algorithms|" + strings.Join(c.SigningAlgs, ","),
		"Expiration Leeway|" + c.ExpirationLeeway.String(),
		"NotBefore Leeway|" + c.NotBeforeLeeway.String(),
		"ClockSkew Leeway|" + c.ClockSkewLeeway.String(),
		"Claim mappings|" + strings.Join(formatMapping(c.ClaimMappings), "; "),
		"List claim mappings|" + strings.Join(formatMapping(c.ListClaimMappings), "; "),
	}))
}

// formatMapping prints a claim mapping as {claim: name} items, sorted so
// the output is stable.
func formatMapping(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("{%s: %s}", k, v))
	}
	sort.Strings(out)
	return out
}

const aclBindingRuleCreateUsage = `
Usage: nomad acl binding-rule create [options]

  Create is used to create new ACL binding rules. Use requires a management
  token.
`

const aclBindingRuleUpdateUsage = `
Usage: nomad acl binding-rule update [options] <acl_binding_rule_id>

  Update is used to update an existing ACL binding rule. Use requires a
  management token. With -no-merge the rule is replaced by the flags given.
`

type bindingRuleFlags struct {
	af          apiFlags
	description string
	authMethod  string
	selector    string
	bindType    string
	bindName    string
	noMerge     bool
	json        bool
	tmpl        string
}

func (f *bindingRuleFlags) register(fs *flag.FlagSet, create bool) {
	f.af.register(fs)
	fs.StringVar(&f.description, "description", "", "A human readable description of the binding rule")
	if create {
		fs.StringVar(&f.authMethod, "auth-method", "", "The name of the auth method the rule applies to (required)")
	} else {
		fs.BoolVar(&f.noMerge, "no-merge", false, "Replace the rule with the flags given instead of merging them")
	}
	fs.StringVar(&f.selector, "selector", "", "Expression matched against the login's claims")
	fs.StringVar(&f.bindType, "bind-type", "", "What the rule binds: role, policy or management")
	fs.StringVar(&f.bindName, "bind-name", "", "Name of the role or policy to bind")
	fs.BoolVar(&f.json, "json", false, "Output the ACL binding-rule in a JSON format")
	fs.StringVar(&f.tmpl, "t", "", "Format and display the ACL binding-rule using a Go template")
}

func runACLBindingRuleCreate(args []string, s Streams) int {
	var f bindingRuleFlags
	fs := newFlagSet("acl binding-rule create", s.Stderr, aclBindingRuleCreateUsage)
	f.register(fs, true)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	fail := func(msg string) int { fmt.Fprintln(s.Stderr, msg); return 1 }
	switch {
	case fs.NArg() != 0:
		return fail("This command takes no arguments")
	case f.authMethod == "":
		return fail("ACL binding rule auth method must be specified using the -auth-method flag")
	case f.bindType == "":
		return fail("ACL binding rule bind type must be specified using the -bind-type flag")
	}
	client, err := f.af.client()
	if err != nil {
		return fail(err.Error())
	}
	rule, _, err := client.ACLBindingRules().Create(&api.ACLBindingRule{
		Description: f.description, AuthMethod: f.authMethod, Selector: f.selector, BindType: f.bindType, BindName: f.bindName,
	}, nil)
	if err != nil {
		return fail(fmt.Sprintf("Error creating ACL binding rule: %s", err))
	}
	return outputOr(s, f.json, f.tmpl, rule, func() { fmt.Fprintln(s.Stdout, formatACLBindingRule(rule)) })
}

func runACLBindingRuleUpdate(args []string, s Streams) int {
	var f bindingRuleFlags
	fs := newFlagSet("acl binding-rule update", s.Stderr, aclBindingRuleUpdateUsage)
	f.register(fs, false)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	fail := func(msg string) int { fmt.Fprintln(s.Stderr, msg); return 1 }
	if fs.NArg() != 1 {
		return fail("This command takes one argument: <acl_binding_rule_id>")
	}
	client, err := f.af.client()
	if err != nil {
		return fail(err.Error())
	}
	current, _, err := client.ACLBindingRules().Get(fs.Arg(0), nil)
	if err != nil {
		return fail(fmt.Sprintf("Error when retrieving ACL binding rule: %v", err))
	}
	var updated api.ACLBindingRule
	if f.noMerge {
		if f.bindType == "" {
			return fail("ACL binding rule bind type must be specified using the -bind-type flag")
		}
		updated = api.ACLBindingRule{ID: current.ID, Description: f.description, AuthMethod: current.AuthMethod,
			Selector: f.selector, BindType: f.bindType, BindName: f.bindName}
	} else {
		if f.description == "" && f.selector == "" && f.bindType == "" && f.bindName == "" {
			return fail("Please provide at least one update for the ACL binding rule")
		}
		updated = *current
		if f.description != "" {
			updated.Description = f.description
		}
		if f.selector != "" {
			updated.Selector = f.selector
		}
		if f.bindType != "" {
			updated.BindType = f.bindType
		}
		if f.bindName != "" {
			updated.BindName = f.bindName
		}
	}
	rule, _, err := client.ACLBindingRules().Update(&updated, nil)
	if err != nil {
		return fail(fmt.Sprintf("Error updating ACL binding rule: %s", err))
	}
	return outputOr(s, f.json, f.tmpl, rule, func() { fmt.Fprintln(s.Stdout, formatACLBindingRule(rule)) })
}

const aclBindingRuleListUsage = `
Usage: nomad acl binding-rule list [options]

  List is used to list existing ACL binding rules. Use requires a management
  token.
`

func runACLBindingRuleList(args []string, s Streams) int {
	var (
		af   apiFlags
		js   bool
		tmpl string
	)
	fs := newFlagSet("acl binding-rule list", s.Stderr, aclBindingRuleListUsage)
	af.register(fs)
	fs.BoolVar(&js, "json", false, "Output the ACL binding rules in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL binding rules using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	rules, _, err := client.ACLBindingRules().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error listing ACL binding rules: %s\n", err)
		return 1
	}
	return outputOr(s, js, tmpl, rules, func() {
		if len(rules) == 0 {
			fmt.Fprintln(s.Stdout, "No ACL binding rules found")
			return
		}
		rows := []string{"ID|Description|Auth Method"}
		for _, r := range rules {
			rows = append(rows, fmt.Sprintf("%s|%s|%s", r.ID, r.Description, r.AuthMethod))
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
	})
}

const aclBindingRuleInfoUsage = `
Usage: nomad acl binding-rule info [options] <acl_binding_rule_id>

  Info is used to fetch information on an existing ACL binding rule. Use
  requires a management token.
`

func runACLBindingRuleInfo(args []string, s Streams) int {
	var (
		af   apiFlags
		js   bool
		tmpl string
	)
	fs := newFlagSet("acl binding-rule info", s.Stderr, aclBindingRuleInfoUsage)
	af.register(fs)
	fs.BoolVar(&js, "json", false, "Output the ACL binding-rule in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL binding-rule using a Go template")
	client, ok := parseOneArg(fs, &af, args, "<acl_binding_rule_id>", s)
	if !ok {
		return 1
	}
	rule, _, err := client.ACLBindingRules().Get(fs.Arg(0), nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading ACL binding rule: %s\n", err)
		return 1
	}
	return outputOr(s, js, tmpl, rule, func() { fmt.Fprintln(s.Stdout, formatACLBindingRule(rule)) })
}

const aclBindingRuleDeleteUsage = `
Usage: nomad acl binding-rule delete [options] <acl_binding_rule_id>

  Delete is used to delete an existing ACL binding rule. Use requires a
  management token.
`

func runACLBindingRuleDelete(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("acl binding-rule delete", s.Stderr, aclBindingRuleDeleteUsage)
	af.register(fs)
	client, ok := parseOneArg(fs, &af, args, "<acl_binding_rule_id>", s)
	if !ok {
		return 1
	}
	if _, err := client.ACLBindingRules().Delete(fs.Arg(0), nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error deleting ACL binding rule: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "ACL binding rule %s successfully deleted\n", fs.Arg(0))
	return 0
}

func formatACLBindingRule(r *api.ACLBindingRule) string {
	return formatKV([]string{
		"ID|" + r.ID,
		"Description|" + r.Description,
		"Auth Method|" + r.AuthMethod,
		fmt.Sprintf("Selector|%q", r.Selector),
		"Bind Type|" + r.BindType,
		"Bind Name|" + r.BindName,
		fmt.Sprintf("Create Time|%s", r.CreateTime),
		fmt.Sprintf("Modify Time|%s", r.ModifyTime),
		fmt.Sprintf("Create Index|%d", r.CreateIndex),
		fmt.Sprintf("Modify Index|%d", r.ModifyIndex),
	})
}

const loginUsage = `
Usage: nomad login [options]

  Login trades a JWT from an identity provider for a Nomad ACL token through
  a JWT auth method (-method, or the default method). OIDC login is not
  supported by nomadq.
`

func runLogin(args []string, s Streams) int {
	var (
		af         apiFlags
		methodName string
		methodType string
		loginToken string
		js         bool
		tmpl       string
	)
	fs := newFlagSet("login", s.Stderr, loginUsage)
	af.register(fs)
	fs.StringVar(&methodName, "method", "", "The name of the ACL auth method to log in with (default: the default method)")
	fs.StringVar(&methodType, "type", "", "The type of the auth method; when given it must match the method's")
	fs.StringVar(&loginToken, "login-token", "", "The JWT to log in with")
	fs.BoolVar(&js, "json", false, "Output the ACL token in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the ACL token using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	fail := func(msg string) int { fmt.Fprintln(s.Stderr, msg); return 1 }
	if fs.NArg() != 0 {
		return fail("This command takes no arguments")
	}
	client, err := af.client()
	if err != nil {
		return fail(err.Error())
	}
	methods, _, err := client.ACLAuthMethods().List(nil)
	if err != nil {
		return fail(fmt.Sprintf("Error listing ACL auth methods: %s", err))
	}
	var found *api.ACLAuthMethodListStub
	for _, m := range methods {
		if methodName == "" && m.Default || methodName != "" && m.Name == methodName {
			found = m
		}
	}
	switch {
	case found == nil && methodName == "":
		return fail("Must specify an auth method name, no default found")
	case found == nil:
		return fail(fmt.Sprintf("Error: method %s not found in the state store. ", methodName))
	case methodType != "" && !strings.EqualFold(methodType, found.Type):
		return fail(fmt.Sprintf("Error: method %s is of type %s, not %s", found.Name, found.Type, methodType))
	case found.Type == api.ACLAuthMethodTypeOIDC:
		return fail(fmt.Sprintf("Error performing login: method %s is of type OIDC: OIDC login is not supported by nomadq", found.Name))
	case found.Type != api.ACLAuthMethodTypeJWT:
		return fail(fmt.Sprintf("Unsupported authentication type %q", found.Type))
	case loginToken == "":
		return fail("You need to provide a login token.")
	}
	token, _, err := client.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: found.Name, LoginToken: loginToken}, nil)
	if err != nil {
		return fail(fmt.Sprintf("Error performing login: %v", err))
	}
	return outputOr(s, js, tmpl, token, func() {
		fmt.Fprintf(s.Stdout, "Successfully logged in via %s and %s\n\n", found.Type, found.Name)
		outputACLToken(s.Stdout, token)
	})
}
