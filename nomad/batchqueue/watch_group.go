package batchqueue

import (
	"context"
	"reflect"
	"sync"

	memdb "github.com/hashicorp/go-memdb"
)

// shardSize is how many channels one goroutine of a watchGroup selects
// on; reflect.Select takes at most 65536 cases.
const shardSize = 1 << 15

// watchGroup waits on the channels of every released workload's watch
// set and wakes the round when one closes. It runs one goroutine per
// shardSize distinct channels, not one per workload, so a backlog of
// 10,000 stalled or constrained workloads costs one goroutine. Workloads
// that read the same channel (memdb hands jobs without evals the same
// tree node's channel) share its case.
type watchGroup struct {
	mu   sync.Mutex
	ctx  context.Context
	wake func()

	// users counts the workloads watching each channel; a channel
	// no workload watches leaves the select.
	users map[<-chan struct{}]int
	chans []<-chan struct{}       // distinct channels, shard i holds chans[i*shardSize:]
	pos   map[<-chan struct{}]int // index of each channel in chans
	pokes []chan struct{}         // one per running shard: its slice of chans changed
}

func newWatchGroup(ctx context.Context, wake func()) *watchGroup {
	return &watchGroup{ctx: ctx, wake: wake,
		users: make(map[<-chan struct{}]int), pos: make(map[<-chan struct{}]int)}
}

// swap stops watching old's channels for one workload and starts
// watching new's (either may be nil).
func (g *watchGroup) swap(old, new memdb.WatchSet) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for ch := range new {
		if g.users[ch]++; g.users[ch] == 1 {
			g.pos[ch] = len(g.chans)
			g.chans = append(g.chans, ch)
			g.poke(len(g.chans) - 1)
		}
	}
	for ch := range old {
		if _, ok := g.pos[ch]; !ok {
			continue // closed and dropped by its shard
		}
		if g.users[ch]--; g.users[ch] <= 0 {
			g.drop(ch)
		}
	}
	for len(g.pokes)*shardSize < len(g.chans) {
		poke := make(chan struct{}, 1)
		g.pokes = append(g.pokes, poke)
		go g.run(len(g.pokes)-1, poke)
	}
}

// drop removes ch from the select, moving the last channel into its
// place. Callers hold mu.
func (g *watchGroup) drop(ch <-chan struct{}) {
	i, ok := g.pos[ch]
	if !ok {
		return
	}
	last := len(g.chans) - 1
	g.chans[i] = g.chans[last]
	g.pos[g.chans[i]] = i
	g.chans = g.chans[:last]
	delete(g.pos, ch)
	delete(g.users, ch)
	g.poke(i)
	g.poke(last)
}

// poke tells the shard holding index i that its channels changed.
// Callers hold mu.
func (g *watchGroup) poke(i int) {
	if s := i / shardSize; s < len(g.pokes) {
		select {
		case g.pokes[s] <- struct{}{}:
		default:
		}
	}
}

// size is the number of distinct channels watched and of goroutines
// watching them.
func (g *watchGroup) size() (chans, goroutines int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.chans), len(g.pokes)
}

// run is shard s: it selects on its slice of channels until ctx ends.
// A closed channel leaves the select (it would fire at once again) and
// wakes the round, which rejudges the workloads watching it; their new
// watch sets come back through swap.
func (g *watchGroup) run(s int, poke chan struct{}) {
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(g.ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(poke)},
	}
	var mine []<-chan struct{}
	for {
		g.mu.Lock()
		lo, hi := s*shardSize, min((s+1)*shardSize, len(g.chans))
		mine = append(mine[:0], g.chans[min(lo, hi):hi]...)
		g.mu.Unlock()
		cases = cases[:2]
		for _, ch := range mine {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
		}
		i, _, _ := reflect.Select(cases)
		switch i {
		case 0:
			return
		case 1:
			continue
		}
		// One write often closes several channels: drop every closed
		// one before selecting again, not one per rebuild.
		g.mu.Lock()
		g.drop(mine[i-2])
		for _, ch := range mine {
			select {
			case <-ch:
				g.drop(ch)
			default:
			}
		}
		g.mu.Unlock()
		g.wake()
	}
}
