package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/nomadq/nomadq/structs"
)

// nodeMetaFile holds the dynamic node metadata (nomad node meta apply)
// in the client's state directory, so it outlives a restart, as in Nomad.
const nodeMetaFile = "node_meta.json"

// ErrBadNodeMeta marks a node metadata update the client refuses.
var ErrBadNodeMeta = errors.New("invalid node metadata")

// NodeMeta is the node's metadata as /v1/client/metadata shows it: the
// metadata in effect, the dynamic changes on top of the configuration
// (a nil value unsets a configured key), and the configured metadata.
type NodeMeta struct {
	Meta    map[string]string
	Dynamic map[string]*string
	Static  map[string]string
}

// loadNodeMeta reads the dynamic metadata an earlier client stored.
func (c *Client) loadNodeMeta() error {
	raw, err := os.ReadFile(filepath.Join(c.cfg.StateDir, nodeMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read dynamic node metadata: %w", err)
	}
	var dyn map[string]*string
	if err := json.Unmarshal(raw, &dyn); err != nil {
		return fmt.Errorf("read dynamic node metadata %s: %w", nodeMetaFile, err)
	}
	c.metaMu.Lock()
	c.dynMeta = dyn
	c.metaMu.Unlock()
	return nil
}

// NodeMeta returns the node's metadata.
func (c *Client) NodeMeta() NodeMeta {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return c.nodeMetaLocked()
}

func (c *Client) nodeMetaLocked() NodeMeta {
	static := maps.Clone(c.cfg.Meta)
	if static == nil {
		static = map[string]string{}
	}
	dyn := maps.Clone(c.dynMeta)
	if dyn == nil {
		dyn = map[string]*string{}
	}
	return NodeMeta{Meta: mergeMeta(static, dyn), Dynamic: dyn, Static: static}
}

// mergeMeta lays the dynamic metadata over the configured one.
func mergeMeta(static map[string]string, dyn map[string]*string) map[string]string {
	out := maps.Clone(static)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range dyn {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = *v
	}
	return out
}

// ApplyNodeMeta sets (or with nil unsets) metadata keys, stores the
// result and registers the node again so the servers schedule on it.
func (c *Client) ApplyNodeMeta(updates map[string]*string) (NodeMeta, error) {
	if len(updates) == 0 {
		return NodeMeta{}, fmt.Errorf("%w: missing required Meta object", ErrBadNodeMeta)
	}
	for k := range updates {
		if k == "" {
			return NodeMeta{}, fmt.Errorf("%w: metadata keys must not be empty", ErrBadNodeMeta)
		}
		for _, part := range strings.Split(k, ".") {
			if !hclsyntax.ValidIdentifier(part) {
				return NodeMeta{}, fmt.Errorf("%w: %q is invalid; metadata keys must be valid dotted hcl identifiers", ErrBadNodeMeta, k)
			}
		}
	}
	c.metaMu.Lock()
	next := maps.Clone(c.dynMeta)
	if next == nil {
		next = map[string]*string{}
	}
	for k, v := range updates {
		_, configured := c.cfg.Meta[k]
		if v == nil && !configured {
			// Unsetting a key only the dynamic metadata had.
			delete(next, k)
			continue
		}
		next[k] = v
	}
	if err := writeNodeMeta(c.cfg.StateDir, next); err != nil {
		c.metaMu.Unlock()
		return NodeMeta{}, err
	}
	c.dynMeta = next
	out := c.nodeMetaLocked()
	c.metaMu.Unlock()
	select {
	case c.nodeChanged <- struct{}{}:
	default:
	}
	return out, nil
}

// writeNodeMeta replaces the stored dynamic metadata atomically.
func writeNodeMeta(dir string, dyn map[string]*string) error {
	raw, err := json.Marshal(dyn)
	if err != nil {
		return fmt.Errorf("store dynamic node metadata: %w", err)
	}
	tmp, err := os.CreateTemp(dir, nodeMetaFile+".*")
	if err != nil {
		return fmt.Errorf("store dynamic node metadata: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return fmt.Errorf("store dynamic node metadata: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("store dynamic node metadata: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("store dynamic node metadata: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, nodeMetaFile)); err != nil {
		return fmt.Errorf("store dynamic node metadata: %w", err)
	}
	return nil
}

// withDynamicMeta returns n, or a copy of it with the dynamic metadata
// laid over its configured metadata (and its class computed again).
func (c *Client) withDynamicMeta(n *structs.Node, copied bool) *structs.Node {
	c.metaMu.Lock()
	dyn := maps.Clone(c.dynMeta)
	c.metaMu.Unlock()
	if len(dyn) == 0 {
		return n
	}
	if !copied {
		n = n.Copy()
	}
	n.Meta = mergeMeta(n.Meta, dyn)
	n.ComputedClass = computedClass(n)
	return n
}
