// Package scheduler turns an evaluation and a read-only view of cluster
// state into a plan: which allocations to place, update in place or stop.
//
// It is a pure decision layer in the style of etcd's raft core: it starts no
// goroutines, reads the clock only through Config.Now, does no I/O and knows
// nothing about Raft. The server supplies State (a snapshot) and Planner
// (plan submission and eval writes); tests supply an in-memory harness.
package scheduler

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/structs"
)

// State is the read-only view of cluster state a scheduler plans against.
type State interface {
	JobByID(namespace, id string) (*structs.Job, error)
	NodeByID(id string) (*structs.Node, error)
	// Nodes returns all nodes, whatever their status.
	Nodes() ([]*structs.Node, error)
	// AllocsByJob returns every allocation of the job, terminal ones too.
	AllocsByJob(namespace, jobID string) ([]*structs.Allocation, error)
	// AllocsByNode returns the allocations on the node that are not
	// terminal; it may return terminal ones too (the scheduler skips
	// them). Answering from an index of live allocations keeps a
	// placement's cost from growing with every alloc the node ever ran.
	AllocsByNode(nodeID string) ([]*structs.Allocation, error)
	EvalByID(id string) (*structs.Evaluation, error)
	SchedulerConfig() (*structs.SchedulerConfiguration, error)
	LatestIndex() (uint64, error)
}

// NodeSetState is a State that can hand out the node list and a by-ID map
// shared between evaluations (read-only to the scheduler), so that each
// one need not build its own.
type NodeSetState interface {
	NodeSet() ([]*structs.Node, map[string]*structs.Node, error)
}

// ReadyCountState is a State that can count the ready nodes by node pool
// and datacenter (structs.CountReadyNodes) once per version of the nodes
// table; the counts are shared and read-only to the scheduler.
type ReadyCountState interface {
	ReadyNodeCounts() (map[string]map[string]int, error)
}

// Planner applies the scheduler's decisions.
type Planner interface {
	// SubmitPlan commits what it can of the plan. A non-nil State means
	// the plan was only partly committed and the scheduler should retry
	// against that refreshed state.
	SubmitPlan(*structs.Plan) (*structs.PlanResult, State, error)
	UpdateEval(*structs.Evaluation) error
	CreateEval(*structs.Evaluation) error
	ReblockEval(*structs.Evaluation) error
}

// Scheduler processes one evaluation to completion.
type Scheduler interface {
	Process(*structs.Evaluation) error
}

// Config carries the scheduler's injected dependencies.
type Config struct {
	Logger hclog.Logger
	// Now is the clock used for reschedule timing and eval timestamps;
	// nil means time.Now.
	Now func() time.Time
	// Rand shuffles the node order; nil keeps state order, which makes
	// placement fully deterministic. Servers give each eval its own (see
	// EvalRand): without it every eval would visit the nodes in the same
	// order, and bin-packing would pile every batch job on the first one.
	Rand *rand.Rand
}

// EvalRand is the shuffle source for one eval: seeded from the eval's ID,
// so an eval visits the nodes in the same order wherever it is processed
// again, as Nomad seeds its node shuffle from the eval.
func EvalRand(evalID string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(evalID))
	seed := h.Sum64()
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// NewScheduler returns the scheduler for an evaluation type: "batch",
// "service", "sysbatch" or "system".
func NewScheduler(schedType string, cfg Config, state State, planner Planner) (Scheduler, error) {
	if state == nil || planner == nil {
		return nil, fmt.Errorf("new %q scheduler: state and planner are required", schedType)
	}
	cfg = cfg.withDefaults()
	switch schedType {
	case structs.JobTypeBatch:
		return newGenericScheduler(cfg.Logger.Named("batch_sched"), cfg, state, planner), nil
	case structs.JobTypeService:
		return newGenericScheduler(cfg.Logger.Named("service_sched"), cfg, state, planner), nil
	case structs.JobTypeSystem:
		return newSystemScheduler(cfg.Logger.Named("system_sched"), cfg, state, planner, false), nil
	case structs.JobTypeSysBatch:
		return newSystemScheduler(cfg.Logger.Named("sysbatch_sched"), cfg, state, planner, true), nil
	}
	return nil, fmt.Errorf("new scheduler: unknown scheduler type %q (want %q, %q, %q or %q)",
		schedType, structs.JobTypeBatch, structs.JobTypeService, structs.JobTypeSysBatch, structs.JobTypeSystem)
}
