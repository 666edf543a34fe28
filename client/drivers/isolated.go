package drivers

import (
	"context"
	"maps"
	"slices"
)

// IsolatedEnv is the environment of a task that sees its directories at
// Nomad's fixed places (/alloc, /local, /secrets), as the exec driver's
// chroot and a docker container do: env with NOMAD_ALLOC_DIR,
// NOMAD_TASK_DIR and NOMAD_SECRETS_DIR pointing there, and extra (such as
// a default PATH) for keys env does not set, as sorted KEY=value pairs.
func IsolatedEnv(env map[string]string, extra map[string]string) []string {
	e := make(map[string]string, len(env)+len(extra)+3)
	for k, v := range extra {
		e[k] = v
	}
	maps.Copy(e, env)
	e["NOMAD_ALLOC_DIR"] = "/alloc"
	e["NOMAD_TASK_DIR"] = "/local"
	e["NOMAD_SECRETS_DIR"] = "/secrets"
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// WaitExit is the channel a driver's WaitTask returns: it yields
// result() once done is closed (result must be set by then), or nothing
// when ctx ends first. The channel is never closed, so a reader never
// takes a nil exit for a real one.
func WaitExit(ctx context.Context, done <-chan struct{}, result func() *ExitResult) <-chan *ExitResult {
	ch := make(chan *ExitResult, 1)
	go func() {
		select {
		case <-done:
			ch <- result()
		case <-ctx.Done():
		}
	}()
	return ch
}
