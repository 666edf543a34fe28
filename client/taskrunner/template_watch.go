package taskrunner

import (
	"context"
	"time"
)

// varWatchWait is how long one blocking query of a watched variable
// waits on the servers before it is asked again.
const varWatchWait = 5 * time.Minute

// varWatchRetry is the pause after a failed watch query (servers away).
const varWatchRetry = 2 * time.Second

// waitVarChange blocks until the servers' answer to any of deps moves
// past the index the render saw, and returns nil; or returns ctx's error
// when ctx ends first. Each dependency is one blocking query at a time,
// the way consul-template watches its Nomad dependencies.
func waitVarChange(ctx context.Context, src VariableSource, token string, deps []varDep) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan struct{}, 1)
	for _, d := range deps {
		go func() {
			for ctx.Err() == nil {
				q := VariableQuery{Token: token, Namespace: d.namespace, Path: d.path, MinIndex: d.index, MaxWait: varWatchWait}
				var idx uint64
				var err error
				if d.svc != nil {
					idx, err = d.svc.poll(ctx, d, d.index, varWatchWait)
				} else if d.list {
					_, idx, err = src.ListVariables(ctx, q)
				} else {
					_, idx, err = src.ReadVariable(ctx, q)
				}
				if err != nil {
					select {
					case <-ctx.Done():
					case <-time.After(varWatchRetry):
					}
					continue
				}
				if idx != d.index {
					// A lower index too: the servers' state was rebuilt,
					// so read everything again.
					select {
					case changed <- struct{}{}:
					default:
					}
					return
				}
			}
		}()
	}
	select {
	case <-changed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
