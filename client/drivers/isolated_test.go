package drivers

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/shoenig/test/must"
)

func TestIsolatedEnv(t *testing.T) {
	got := IsolatedEnv(map[string]string{"A": "1", "NOMAD_TASK_DIR": "/host/path", "PATH": "/mine"},
		map[string]string{"PATH": "/default", "EXTRA": "x"})
	must.Eq(t, []string{"A=1", "EXTRA=x", "NOMAD_ALLOC_DIR=/alloc", "NOMAD_SECRETS_DIR=/secrets", "NOMAD_TASK_DIR=/local", "PATH=/mine"}, got)
}

func TestWaitExit(t *testing.T) {
	done := make(chan struct{})
	var res *ExitResult
	ch := WaitExit(context.Background(), done, func() *ExitResult { return res })
	res = &ExitResult{ExitCode: 3}
	close(done)
	must.Eq(t, 3, (<-ch).ExitCode)

	// A wait whose context ends yields nothing, not a nil exit: checked
	// once its goroutine has done all it will (synctest.Wait).
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		ch := WaitExit(ctx, make(chan struct{}), func() *ExitResult { return &ExitResult{} })
		cancel()
		synctest.Wait()
		select {
		case r := <-ch:
			t.Fatalf("a wait whose context ended yielded %v", r)
		default:
		}
	})
}
