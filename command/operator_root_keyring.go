package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

const rootKeyringListUsage = `
Usage: nomad operator root keyring list [options]

  List the root keys of the keyring: their metadata, never their key
  material.

Keyring Options:

  -verbose
    Show full key IDs.
`

const rootKeyringRotateUsage = `
Usage: nomad operator root keyring rotate -now | -prepublish <duration> [options]

  Generate a new root key. With -now it becomes the active key at once and
  signs every workload identity from then on; the previous key stays in the
  keyring, inactive, so the identities it signed still verify against the
  JWKS. With -prepublish the new key is published in the JWKS at once and
  becomes active when the duration has passed, so that verifiers that cache
  the JWKS know it before it signs anything.

Keyring Options:

  -now
    Make the new key active immediately. One of -now or -prepublish must
    be set.

  -prepublish <duration>
    Publish the new key now and make it active after the duration (ex.
    "1h"). One of -now or -prepublish must be set.

  -full
    Also re-encrypt every variable with the new key. The command returns at
    once; the leader re-encrypts the variables in the background, the old
    key is listed as "rekeying" meanwhile and as "inactive" when it is done.
    Cannot be used with -prepublish.

  -verbose
    Show full key IDs.
`

const rootKeyringRemoveUsage = `
Usage: nomad operator root keyring remove [options] <key ID>

  Remove an inactive root key from the keyring. The active key cannot be
  removed; a key that signed the identity of a running allocation is kept
  unless -force is given.

Remove Options:

  -force
    Remove the key even if it signed the identity of a running allocation.
`

// renderRootKeys is Nomad's keyring table: Key, State, Create Time and
// Publish Time (empty unless the key waits to be activated).
func renderRootKeys(keys []*api.RootKeyMeta, verbose bool) string {
	rows := make([]string, 0, len(keys)+1)
	rows = append(rows, "Key|State|Create Time|Publish Time")
	for _, k := range keys {
		publish := ""
		if k.PublishTime > 0 {
			publish = formatUnixNano(k.PublishTime)
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s", shortID(k.KeyID, verbose), k.State, formatUnixNano(k.CreateTime), publish))
	}
	return formatList(rows)
}

func runRootKeyringList(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
	)
	fs := newFlagSet("operator root keyring list", s.Stderr, rootKeyringListUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full key IDs")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	keys, _, err := client.Keyring().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "error: %s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, renderRootKeys(keys, verbose))
	return 0
}

func runRootKeyringRotate(args []string, s Streams) int {
	var (
		af         apiFlags
		now        bool
		full       bool
		verbose    bool
		prepublish time.Duration
	)
	fs := newFlagSet("operator root keyring rotate", s.Stderr, rootKeyringRotateUsage)
	af.register(fs)
	fs.BoolVar(&now, "now", false, "Make the new key active immediately")
	fs.BoolVar(&full, "full", false, "Re-encrypt every variable with the new key")
	fs.DurationVar(&prepublish, "prepublish", 0, "Make the new key active after this duration")
	fs.BoolVar(&verbose, "verbose", false, "Show full key IDs")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return 1
	}
	if now == (prepublish != 0) {
		fmt.Fprintln(s.Stderr, `One of "-now" or "-prepublish" must be used.

If a key has been leaked use "-now" to force immediate rotation.

Otherwise use "-prepublish <duration>" so that the new key is not used to
sign workload identities before JWKS consumers have fetched it.`)
		return 1
	}
	if prepublish < 0 {
		fmt.Fprintf(s.Stderr, "Invalid -prepublish %s: must be positive\n", prepublish)
		return 1
	}
	var publishTime int64
	if prepublish > 0 {
		publishTime = time.Now().Add(prepublish).UnixNano()
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	key, _, err := client.Keyring().Rotate(&api.KeyringRotateOptions{Full: full, PublishTime: publishTime}, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "error: %s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, renderRootKeys([]*api.RootKeyMeta{key}, verbose))
	return 0
}

func runRootKeyringRemove(args []string, s Streams) int {
	var (
		af    apiFlags
		force bool
	)
	fs := newFlagSet("operator root keyring remove", s.Stderr, rootKeyringRemoveUsage)
	af.register(fs)
	fs.BoolVar(&force, "force", false, "Remove the key even if it is in use")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fmt.Fprintln(s.Stderr, "This command requires one argument: <key ID>")
		return 1
	}
	id := strings.ToLower(fs.Arg(0))
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	// A short ID, as list shows it, is resolved against the keyring.
	keys, _, err := client.Keyring().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "error: %s\n", err)
		return 1
	}
	var matches []*api.RootKeyMeta
	for _, k := range keys {
		if k.KeyID == id {
			matches = []*api.RootKeyMeta{k}
			break
		}
		if strings.HasPrefix(k.KeyID, id) {
			matches = append(matches, k)
		}
	}
	switch len(matches) {
	case 0:
		fmt.Fprintf(s.Stderr, "No encryption key(s) with prefix or ID %q found\n", id)
		return 1
	case 1:
	default:
		fmt.Fprintf(s.Stderr, "Prefix matched multiple keys\n\n%s\n", renderRootKeys(matches, true))
		return 1
	}
	id = matches[0].KeyID
	if _, err := client.Keyring().Delete(&api.KeyringDeleteOptions{KeyID: id, Force: force}, nil); err != nil {
		fmt.Fprintf(s.Stderr, "error: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Removed encryption key %s\n", id)
	return 0
}
