package client

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"
)

// Dynamic metadata outlives the client: a new client on the same state
// directory starts with it.
func TestNodeMetaPersists(t *testing.T) {
	dir := t.TempDir()
	newClient := func() *Client {
		return &Client{cfg: Config{StateDir: dir, Meta: map[string]string{"rack": "r1"}}, nodeChanged: make(chan struct{}, 1)}
	}
	c := newClient()
	v := "db"
	got, err := c.ApplyNodeMeta(map[string]*string{"role": &v, "rack": nil})
	must.NoError(t, err)
	must.Eq(t, map[string]string{"role": "db"}, got.Meta)
	must.Eq(t, map[string]string{"rack": "r1"}, got.Static)
	select {
	case <-c.nodeChanged:
	default:
		t.Fatal("the node is not registered again")
	}

	again := newClient()
	must.NoError(t, again.loadNodeMeta())
	must.Eq(t, map[string]string{"role": "db"}, again.NodeMeta().Meta)

	_, err = again.ApplyNodeMeta(map[string]*string{"a..b": &v})
	must.True(t, errors.Is(err, ErrBadNodeMeta))
	_, err = again.ApplyNodeMeta(nil)
	must.ErrorContains(t, err, "missing required Meta object")
}
