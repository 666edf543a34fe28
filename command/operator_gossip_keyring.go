package command

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/nomad/api"
)

const gossipKeyringListUsage = `
Usage: nomad operator gossip keyring list [options]

  List the gossip encryption keys installed on the servers. The request
  goes to every server through serf; it needs agent write permission.
`

const gossipKeyringInstallUsage = `
Usage: nomad operator gossip keyring install [options] <key>

  Install a new gossip encryption key on every server. The key is used to
  decrypt gossip at once, and to encrypt it only after "use". Generate one
  with "nomad operator gossip keyring generate".
`

const gossipKeyringUseUsage = `
Usage: nomad operator gossip keyring use [options] <key>

  Make an installed key the primary gossip encryption key on every server:
  the key the servers encrypt their gossip with from now on.
`

const gossipKeyringRemoveUsage = `
Usage: nomad operator gossip keyring remove [options] <key>

  Remove a gossip encryption key from every server's keyring. The primary
  key cannot be removed: "use" another one first.
`

const gossipKeyringGenerateUsage = `
Usage: nomad operator gossip keyring generate

  Print a new random 32-byte (AES-256) gossip encryption key, base64
  encoded, for server.encrypt or "nomad operator gossip keyring install".
`

func runGossipKeyringList(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("operator gossip keyring list", s.Stderr, gossipKeyringListUsage)
	af.register(fs)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error creating nomad cli client: %s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, "Gathering installed encryption keys...")
	resp, err := client.Agent().ListKeys()
	if err != nil {
		fmt.Fprintf(s.Stderr, "error: %s\n", err)
		return 1
	}
	rows := append([]string{"Key"}, slices.Sorted(maps.Keys(resp.Keys))...)
	fmt.Fprintln(s.Stdout, formatList(rows))
	return 0
}

// gossipKeyringChange is install, use and remove: one key argument, one
// progress line, one call of the official client.
func gossipKeyringChange(name, usage, progress string, call func(*api.Agent, string) (*api.KeyringResponse, error)) commandFunc {
	return func(args []string, s Streams) int {
		var af apiFlags
		fs := newFlagSet(name, s.Stderr, usage)
		af.register(fs)
		if err := fs.Parse(args); err != nil {
			return 1
		}
		if fs.NArg() != 1 {
			fmt.Fprintln(s.Stderr, "This command requires one argument: <key>")
			return 1
		}
		client, err := af.client()
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error creating nomad cli client: %s\n", err)
			return 1
		}
		fmt.Fprintln(s.Stdout, progress)
		if _, err := call(client.Agent(), fs.Arg(0)); err != nil {
			fmt.Fprintf(s.Stderr, "error: %s\n", err)
			return 1
		}
		return 0
	}
}

var (
	runGossipKeyringInstall = gossipKeyringChange("operator gossip keyring install", gossipKeyringInstallUsage,
		"Installing new gossip encryption key...", (*api.Agent).InstallKey)
	runGossipKeyringUse = gossipKeyringChange("operator gossip keyring use", gossipKeyringUseUsage,
		"Changing primary gossip encryption key...", (*api.Agent).UseKey)
	runGossipKeyringRemove = gossipKeyringChange("operator gossip keyring remove", gossipKeyringRemoveUsage,
		"Removing gossip encryption key...", (*api.Agent).RemoveKey)
)

func runGossipKeyringGenerate(args []string, s Streams) int {
	fs := newFlagSet("operator gossip keyring generate", s.Stderr, gossipKeyringGenerateUsage)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(s.Stderr, "This command takes no arguments")
		return 1
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		fmt.Fprintf(s.Stderr, "Error reading random data: %s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, base64.StdEncoding.EncodeToString(key))
	return 0
}
