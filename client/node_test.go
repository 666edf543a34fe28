package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// Only the servers' coded 404 for an unknown node makes a client register
// again; other errors that merely say "not found" do not.
func TestIsUnknownNode(t *testing.T) {
	unknown := structs.NewErrRPCCodedf(404, "node %s not found", "n1")
	must.True(t, IsUnknownNode(unknown))
	must.True(t, IsUnknownNode(errors.New(unknown.Error())), must.Sprint("as it arrives over RPC, as text"))
	must.False(t, IsUnknownNode(structs.ErrTokenNotFound))
	must.False(t, IsUnknownNode(errors.New("rpc: can't find service: not found")))
	must.False(t, IsUnknownNode(fmt.Errorf("dial server: %w", errors.New("connection refused"))))
}
