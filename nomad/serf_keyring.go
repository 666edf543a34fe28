package nomad

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"

	"github.com/nomadq/nomadq/structs"
)

// SerfKeyringFile is where a server keeps its gossip keyring, under the
// data dir, as Nomad does: a JSON array of base64 keys, the primary first.
// Serf rewrites it on every install, use and remove, so a restarted server
// gossips with the keys the cluster uses now, not with server.encrypt.
const SerfKeyringFile = "server/serf.keyring"

// setupKeyring gives serf the server's gossip keyring. Outside dev mode
// the keyring file is the truth once it exists; Config.EncryptKey only
// seeds it on the first start. In dev mode the key lives in memory.
func (s *Server) setupKeyring(conf *serf.Config) error {
	var seed []byte
	if len(s.config.EncryptKey) > 0 {
		if err := memberlist.ValidateKey(s.config.EncryptKey); err != nil {
			return fmt.Errorf("server: gossip key: %w", err)
		}
		seed = s.config.EncryptKey
	}
	if s.config.DevMode || s.config.DataDir == "" {
		if seed == nil {
			return nil
		}
		ring, err := memberlist.NewKeyring(nil, seed)
		if err != nil {
			return fmt.Errorf("server: gossip keyring: %w", err)
		}
		conf.MemberlistConfig.Keyring = ring
		return nil
	}
	path := filepath.Join(s.config.DataDir, SerfKeyringFile)
	_, statErr := os.Stat(path)
	switch {
	case statErr == nil && seed != nil:
		s.logger.Warn("keyring exists but server.encrypt is set; using the keyring", "path", path)
	case errors.Is(statErr, os.ErrNotExist) && seed != nil:
		if err := writeKeyringFile(path, seed); err != nil {
			return err
		}
	case errors.Is(statErr, os.ErrNotExist):
		return nil
	case statErr != nil:
		return fmt.Errorf("server: gossip keyring: %w", statErr)
	}
	ring, err := readKeyringFile(path)
	if err != nil {
		return err
	}
	conf.MemberlistConfig.Keyring = ring
	conf.KeyringFile = path
	return nil
}

func writeKeyringFile(path string, key []byte) error {
	body, err := json.Marshal([]string{base64.StdEncoding.EncodeToString(key)})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("server: gossip keyring: %w", err)
	}
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return fmt.Errorf("server: gossip keyring: %w", err)
	}
	return nil
}

func readKeyringFile(path string) (*memberlist.Keyring, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server: gossip keyring: %w", err)
	}
	var keys []string
	if err := json.Unmarshal(body, &keys); err != nil {
		return nil, fmt.Errorf("server: gossip keyring %s: not a JSON array of base64 keys: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("server: gossip keyring %s has no keys", path)
	}
	raw := make([][]byte, len(keys))
	for i, k := range keys {
		if raw[i], err = structs.DecodeGossipKey(k); err != nil {
			return nil, fmt.Errorf("server: gossip keyring %s, key %d: %w", path, i+1, err)
		}
	}
	ring, err := memberlist.NewKeyring(raw, raw[0])
	if err != nil {
		return nil, fmt.Errorf("server: gossip keyring %s: %w", path, err)
	}
	return ring, nil
}

// GossipKeyringOp names a cluster-wide operation on the gossip keyring.
type GossipKeyringOp string

// The gossip keyring operations of /v1/agent/keyring/<op>.
const (
	GossipKeyringList    GossipKeyringOp = "list"
	GossipKeyringInstall GossipKeyringOp = "install"
	GossipKeyringUse     GossipKeyringOp = "use"
	GossipKeyringRemove  GossipKeyringOp = "remove"
)

// ErrGossipKeyringRefused wraps the failure of a keyring operation that
// servers answered with a refusal (a key not installed, the primary key
// removed, encryption off), as opposed to servers that did not answer.
var ErrGossipKeyringRefused = errors.New("refused")

// GossipKeyring runs op on every server's gossip keyring through serf and
// gathers their answers: per-server messages, how many servers hold each
// key, and how many servers were asked.
func (s *Server) GossipKeyring(op GossipKeyringOp, key string) (*serf.KeyResponse, error) {
	km := s.serf.KeyManager()
	var (
		resp *serf.KeyResponse
		err  error
	)
	switch op {
	case GossipKeyringList:
		resp, err = km.ListKeys()
	case GossipKeyringInstall:
		resp, err = km.InstallKey(key)
	case GossipKeyringUse:
		resp, err = km.UseKey(key)
	case GossipKeyringRemove:
		resp, err = km.RemoveKey(key)
	default:
		return nil, fmt.Errorf("gossip keyring operation %q: must be list, install, use or remove", op)
	}
	if err == nil {
		return resp, nil
	}
	if resp == nil || len(resp.Messages) == 0 {
		return resp, err
	}
	// Serf's error only counts failures; the reasons are per server.
	msg := err.Error()
	for _, node := range slices.Sorted(maps.Keys(resp.Messages)) {
		msg += fmt.Sprintf("; %s: %s", node, resp.Messages[node])
	}
	if resp.NumErr > 0 {
		return resp, fmt.Errorf("%w: %s", ErrGossipKeyringRefused, msg)
	}
	return resp, errors.New(msg)
}
