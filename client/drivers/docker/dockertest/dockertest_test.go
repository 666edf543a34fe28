package dockertest

import (
	"context"
	"testing"

	"github.com/moby/moby/client"
	"github.com/shoenig/test/must"
)

func TestMain(m *testing.M) { Main(m) }

// TestEngine_ImageImported checks the engine answers and holds the test
// image with busybox as its only binary.
func TestEngine_ImageImported(t *testing.T) {
	e := Require(t)
	res, err := e.Client.ImageInspect(context.Background(), Image)
	must.NoError(t, err)
	must.Eq(t, []string{"/bin/sh"}, []string(res.Config.Cmd))
	_, err = e.Client.Ping(context.Background(), client.PingOptions{})
	must.NoError(t, err)
}
