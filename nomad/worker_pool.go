package nomad

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Worker statuses in /v1/agent/schedulers, Nomad's words. nomadq runs
// scheduling workers on the leader only, so a follower's are Paused.
const (
	WorkerStarted = "Started"
	WorkerPaused  = "Paused"
)

// Workload statuses: what a worker is doing.
const (
	WorkloadStarting         = "Starting"
	WorkloadWaitingToDequeue = "WaitingToDequeue"
	WorkloadScheduling       = "Scheduling"
	WorkloadSubmitting       = "Submitting"
	WorkloadStopped          = "Stopped"
)

// SchedulerWorkerPoolArgs is the size of the worker pool and the eval
// types its workers take.
type SchedulerWorkerPoolArgs struct {
	NumSchedulers     int
	EnabledSchedulers []string
}

// Validate accepts what Nomad accepts: 0 to the number of CPUs workers,
// and a scheduler list of known types that includes _core.
func (a SchedulerWorkerPoolArgs) Validate() error {
	if a.NumSchedulers < 0 || a.NumSchedulers > runtime.NumCPU() {
		return fmt.Errorf("num_schedulers %d is out of range: must be between 0 and the number of CPUs (%d)", a.NumSchedulers, runtime.NumCPU())
	}
	if !slices.Contains(a.EnabledSchedulers, structs.JobTypeCore) {
		return fmt.Errorf("enabled_schedulers %q must include %q", a.EnabledSchedulers, structs.JobTypeCore)
	}
	for _, s := range a.EnabledSchedulers {
		if !slices.Contains(workerSchedulers, s) {
			return fmt.Errorf("enabled_schedulers: unknown scheduler %q: must be one of %q", s, workerSchedulers)
		}
	}
	return nil
}

// SchedulerWorkerInfo is one worker as /v1/agent/schedulers shows it.
type SchedulerWorkerInfo struct {
	ID                string
	EnabledSchedulers []string
	Started           time.Time
	Status            string
	WorkloadStatus    string
}

// workerPool holds the server's scheduling workers. The leader runs them
// (run is a leader loop); the operator resizes the pool at any time and a
// running pool restarts with the new workers.
type workerPool struct {
	srv *Server

	mu      sync.Mutex
	args    SchedulerWorkerPoolArgs
	workers []*worker
	running bool
	// changed is closed when the configuration changes; stopped is
	// closed when the running generation of workers has stopped.
	changed chan struct{}
	stopped chan struct{}
}

func newWorkerPool(s *Server, num int) *workerPool {
	p := &workerPool{srv: s, changed: make(chan struct{})}
	p.setLocked(SchedulerWorkerPoolArgs{NumSchedulers: num, EnabledSchedulers: slices.Clone(workerSchedulers)})
	return p
}

func (p *workerPool) setLocked(args SchedulerWorkerPoolArgs) {
	p.args = SchedulerWorkerPoolArgs{NumSchedulers: args.NumSchedulers, EnabledSchedulers: slices.Clone(args.EnabledSchedulers)}
	p.workers = make([]*worker, args.NumSchedulers)
	for i := range p.workers {
		p.workers[i] = p.srv.newWorker(p.args.EnabledSchedulers)
	}
}

// run runs the workers until ctx ends, restarting them when the
// configuration changes.
func (p *workerPool) run(ctx context.Context) {
	for {
		p.mu.Lock()
		workers, changed := p.workers, p.changed
		p.running = true
		stopped := make(chan struct{})
		p.stopped = stopped
		p.mu.Unlock()

		gen, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(gen)
			}()
		}
		select {
		case <-ctx.Done():
		case <-changed:
		}
		cancel()
		wg.Wait()
		p.mu.Lock()
		p.running = false
		p.mu.Unlock()
		close(stopped)
		if ctx.Err() != nil {
			return
		}
	}
}

// Config returns the pool's configuration.
func (p *workerPool) Config() SchedulerWorkerPoolArgs {
	p.mu.Lock()
	defer p.mu.Unlock()
	return SchedulerWorkerPoolArgs{NumSchedulers: p.args.NumSchedulers, EnabledSchedulers: slices.Clone(p.args.EnabledSchedulers)}
}

// SetConfig replaces the workers; a leader's pool restarts with them.
// It returns once the old workers took their last eval, so that none of
// them takes another after the operator was told the change is done.
func (p *workerPool) SetConfig(args SchedulerWorkerPoolArgs) SchedulerWorkerPoolArgs {
	p.mu.Lock()
	p.setLocked(args)
	close(p.changed)
	p.changed = make(chan struct{})
	var stopped chan struct{}
	if p.running {
		stopped = p.stopped
	}
	p.mu.Unlock()
	if stopped != nil {
		<-stopped
	}
	return p.Config()
}

// Info describes every worker.
func (p *workerPool) Info() []SchedulerWorkerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]SchedulerWorkerInfo, 0, len(p.workers))
	for _, w := range p.workers {
		info := SchedulerWorkerInfo{
			ID:                w.id,
			EnabledSchedulers: slices.Clone(w.schedulers),
			Started:           w.started,
			Status:            WorkerPaused,
			WorkloadStatus:    w.Workload(),
		}
		if p.running {
			info.Status = WorkerStarted
		}
		out = append(out, info)
	}
	return out
}

// SchedulerWorkerConfig is the worker pool's configuration.
func (s *Server) SchedulerWorkerConfig() SchedulerWorkerPoolArgs { return s.workerPool.Config() }

// SetSchedulerWorkerConfig resizes the worker pool; args must be valid.
func (s *Server) SetSchedulerWorkerConfig(args SchedulerWorkerPoolArgs) SchedulerWorkerPoolArgs {
	return s.workerPool.SetConfig(args)
}

// SchedulerWorkersInfo describes the server's scheduling workers.
func (s *Server) SchedulerWorkersInfo() []SchedulerWorkerInfo { return s.workerPool.Info() }
