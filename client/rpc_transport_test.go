package client

import (
	"fmt"
	"testing"

	"github.com/hashicorp/yamux"
	"github.com/shoenig/test/must"
)

// TestIsTransportError: the errors a call fails with when its server's
// multiplexed connection breaks move the client on to the next server;
// an answer from the server does not.
func TestIsTransportError(t *testing.T) {
	for _, err := range []error{
		yamux.ErrSessionShutdown, yamux.ErrStreamClosed, yamux.ErrConnectionWriteTimeout,
		yamux.ErrKeepAliveTimeout, yamux.ErrRemoteGoAway, fmt.Errorf("dial server 10.0.0.1:4647: open stream: %w", yamux.ErrSessionShutdown),
	} {
		must.True(t, isTransportError(err), must.Sprint(err))
	}
	must.False(t, isTransportError(fmt.Errorf("job not found")))
}
