package agent

import (
	"sync"

	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/structs"
)

// Server gauges. Nomad's names, so existing dashboards keep working.
var (
	brokerReady    = newLiveGauge("Evaluations ready to be dequeued by a scheduler worker, the failed queue included.", nil, "nomad", "broker", "total_ready")
	brokerUnacked  = newLiveGauge("Evaluations dequeued and not yet acknowledged.", nil, "nomad", "broker", "total_unacked")
	brokerBlocked  = newLiveGauge("Evaluations waiting behind another evaluation of the same job.", nil, "nomad", "broker", "total_blocked")
	brokerWaiting  = newLiveGauge("Evaluations held until their wait time or nack redelivery delay passes.", nil, "nomad", "broker", "total_waiting")
	brokerFailed   = newLiveGauge("Evaluations that reached the delivery limit and wait in the failed queue.", nil, "nomad", "broker", "total_failed")
	blockedTotal   = newLiveGauge("Evaluations blocked until capacity frees up.", nil, "nomad", "blocked_evals", "total_blocked")
	blockedEscaped = newLiveGauge("Blocked evaluations whose constraints escape node-class tracking.", nil, "nomad", "blocked_evals", "total_escaped")
	planQueueDepth = newLiveGauge("Plans waiting for the plan applier.", nil, "nomad", "plan", "queue_depth")
	heartbeats     = newLiveGauge("Nodes whose heartbeat the leader tracks.", nil, "nomad", "heartbeat", "active")
	batchQueue     = newLiveGauge("Entries in the batch job queue by status.", []string{"status"}, "nomad", "batch_queue", "depth")
	queueResAge    = newLiveGauge("Seconds the batch queue's current reservation has been held, 0 when none.", nil, "nomad", "batch_queue", "reservation_age_seconds")
	queueNSDepth   = newLiveGauge("Queued entries in the batch job queue by namespace.", []string{"namespace"}, "nomad", "batch_queue", "queued")
	queueShare     = newLiveGauge("A namespace's weighted dominant share of the cluster, as the batch queue's fair order sees it.", []string{"namespace"}, "nomad", "batch_queue", "share")
)

// jobStatusGauges count registered jobs by status.
var jobStatusGauges = map[string]*liveGauge{
	structs.JobStatusPending: newLiveGauge("Registered jobs that are pending.", nil, "nomad", "job_status", "pending"),
	structs.JobStatusRunning: newLiveGauge("Registered jobs that are running.", nil, "nomad", "job_status", "running"),
	structs.JobStatusDead:    newLiveGauge("Registered jobs that are dead and not yet garbage collected.", nil, "nomad", "job_status", "dead"),
}

// jobSummaryStates are the job summary columns, in the order
// TaskGroupSummary holds them.
var jobSummaryStates = []string{"queued", "complete", "failed", "running", "starting", "lost", "unknown"}

func jobSummaryCounts(s structs.TaskGroupSummary) []int {
	return []int{s.Queued, s.Complete, s.Failed, s.Running, s.Starting, s.Lost, s.Unknown}
}

// serverGauges reads the leader's broker, blocked evals, plan queue,
// heartbeats and job summaries. A follower emits none of them: its
// queues are disabled, and summing several servers' views would count
// each job twice. Job summaries carry namespace, job and task_group
// labels only with perJob (telemetry.publish_job_metrics); otherwise they
// are summed per namespace, so the series count stays flat however many
// jobs run.
func serverGauges(srv *nomad.Server, perJob bool) *liveCollector {
	labels := []string{"namespace"}
	if perJob {
		labels = []string{"namespace", "job", "task_group"}
	}
	summary := make([]*liveGauge, len(jobSummaryStates))
	for i, st := range jobSummaryStates {
		summary[i] = newLiveGauge("Allocations of non-dead jobs in the "+st+" state, from the job summaries.", labels, "nomad", "job_summary", st)
	}
	c := &liveCollector{gauges: append([]*liveGauge{brokerReady, brokerUnacked, brokerBlocked, brokerWaiting, brokerFailed,
		blockedTotal, blockedEscaped, planQueueDepth, heartbeats, batchQueue, queueResAge, queueNSDepth, queueShare}, summary...)}
	for _, g := range jobStatusGauges {
		c.gauges = append(c.gauges, g)
	}
	c.read = func(emit func(*liveGauge, float64, ...string)) {
		if !srv.IsLeader() {
			return
		}
		b := srv.EvalBrokerStats()
		emit(brokerReady, float64(b.TotalReady))
		emit(brokerUnacked, float64(b.TotalUnacked))
		emit(brokerBlocked, float64(b.TotalBlocked))
		emit(brokerWaiting, float64(b.TotalWaiting))
		failed := 0
		if q := b.ByScheduler["_failed"]; q != nil {
			failed = q.Ready
		}
		emit(brokerFailed, float64(failed))
		bl := srv.BlockedEvalsStats()
		emit(blockedTotal, float64(bl.TotalBlocked))
		emit(blockedEscaped, float64(bl.TotalEscaped))
		emit(planQueueDepth, float64(srv.PlanQueueStats().Depth))
		emit(heartbeats, float64(srv.HeartbeatsActive()))
		for status, n := range srv.BatchQueueDepth() {
			emit(batchQueue, float64(n), status)
		}
		emit(queueResAge, srv.BatchQueueReservationAge().Seconds())
		for ns, n := range srv.BatchQueueQueuedByNamespace() {
			emit(queueNSDepth, float64(n), ns)
		}
		for ns, share := range srv.BatchQueueShares() {
			emit(queueShare, share, ns)
		}

		snap, err := srv.State().Snapshot()
		if err != nil {
			return
		}
		jobs, err := snap.Jobs(nil)
		if err != nil {
			return
		}
		byStatus := map[string]int{}
		live := map[structs.NamespacedID]bool{}
		for _, j := range jobs {
			byStatus[j.Status]++
			if j.Status != structs.JobStatusDead {
				live[structs.NamespacedID{Namespace: j.Namespace, ID: j.ID}] = true
			}
		}
		for st, g := range jobStatusGauges {
			emit(g, float64(byStatus[st]))
		}
		sums, err := snap.JobSummaries(nil)
		if err != nil {
			return
		}
		perNS := map[string][]int{}
		for _, js := range sums {
			if !live[structs.NamespacedID{Namespace: js.Namespace, ID: js.JobID}] {
				continue
			}
			for tg, s := range js.Summary {
				counts := jobSummaryCounts(s)
				if perJob {
					for i, g := range summary {
						emit(g, float64(counts[i]), js.Namespace, js.JobID, tg)
					}
					continue
				}
				acc := perNS[js.Namespace]
				if acc == nil {
					acc = make([]int, len(counts))
					perNS[js.Namespace] = acc
				}
				for i, n := range counts {
					acc[i] += n
				}
			}
		}
		for ns, acc := range perNS {
			for i, g := range summary {
				emit(g, float64(acc[i]), ns)
			}
		}
	}
	return c
}

// Client gauges, labelled with the node as Nomad labels them.
var nodeLabels = []string{"node_id", "datacenter", "node_class", "node_pool"}

var (
	allocsPending  = newLiveGauge("Allocations on this client that are pending.", nodeLabels, "client", "allocations", "pending")
	allocsRunning  = newLiveGauge("Allocations on this client that are running.", nodeLabels, "client", "allocations", "running")
	allocsTerminal = newLiveGauge("Allocations on this client that are complete, failed or lost and not yet garbage collected.", nodeLabels, "client", "allocations", "terminal")

	allocatedCPU      = newLiveGauge("CPU (MHz) reserved by the client's live allocations.", nodeLabels, "client", "allocated", "cpu")
	allocatedMemory   = newLiveGauge("Memory (MB) reserved by the client's live allocations.", nodeLabels, "client", "allocated", "memory")
	allocatedDisk     = newLiveGauge("Disk (MB) reserved by the client's live allocations.", nodeLabels, "client", "allocated", "disk")
	unallocatedCPU    = newLiveGauge("CPU (MHz) of the node still free for allocations.", nodeLabels, "client", "unallocated", "cpu")
	unallocatedMemory = newLiveGauge("Memory (MB) of the node still free for allocations.", nodeLabels, "client", "unallocated", "memory")
	unallocatedDisk   = newLiveGauge("Disk (MB) of the node still free for allocations.", nodeLabels, "client", "unallocated", "disk")
)

// maxRunTimeouts counts allocs that max_run_duration ended on this
// client since the agent started.
var maxRunTimeouts = func() *liveGauge {
	g := newLiveGauge("Allocations max_run_duration ended on this client since the agent started.", nodeLabels, "client", "allocs", "max_run_duration", "timeouts_total")
	g.counter = true
	return g
}()

// oomKills counts tasks the kernel killed for their memory limit on this
// client since the agent started; Nomad's client.allocs.oom_killed.
var oomKills = func() *liveGauge {
	g := newLiveGauge("Tasks the kernel killed for exceeding their memory limit on this client since the agent started.", nodeLabels, "client", "allocs", "oom_killed")
	g.counter = true
	return g
}()

// clientGauges reads the client's allocs and node resources
// (telemetry.publish_node_metrics).
func clientGauges(c *client.Client) *liveCollector {
	// Timed-out allocs are counted once each: seen holds only those still
	// on the client, so it stays as small as the client's alloc list.
	var (
		mu       sync.Mutex
		seen     = map[string]bool{}
		timeouts float64
	)
	return &liveCollector{
		gauges: []*liveGauge{allocsPending, allocsRunning, allocsTerminal, maxRunTimeouts, oomKills,
			allocatedCPU, allocatedMemory, allocatedDisk, unallocatedCPU, unallocatedMemory, unallocatedDisk},
		read: func(emit func(*liveGauge, float64, ...string)) {
			s := c.MetricsSnapshot()
			mu.Lock()
			now := make(map[string]bool, len(s.MaxRunTimedOut))
			for _, id := range s.MaxRunTimedOut {
				now[id] = true
				if !seen[id] {
					timeouts++
				}
			}
			seen = now
			total := timeouts
			mu.Unlock()
			lv := []string{s.NodeID, s.Datacenter, s.NodeClass, s.NodePool}
			by := s.AllocsByStatus
			emit(allocsPending, float64(by[structs.AllocClientStatusPending]), lv...)
			emit(allocsRunning, float64(by[structs.AllocClientStatusRunning]), lv...)
			emit(allocsTerminal, float64(by[structs.AllocClientStatusComplete]+by[structs.AllocClientStatusFailed]+by[structs.AllocClientStatusLost]), lv...)
			emit(maxRunTimeouts, total, lv...)
			emit(oomKills, float64(s.OOMKills), lv...)
			emit(allocatedCPU, float64(s.Allocated.CPU), lv...)
			emit(allocatedMemory, float64(s.Allocated.MemoryMB), lv...)
			emit(allocatedDisk, float64(s.Allocated.DiskMB), lv...)
			emit(unallocatedCPU, float64(s.Capacity.CPU-s.Allocated.CPU), lv...)
			emit(unallocatedMemory, float64(s.Capacity.MemoryMB-s.Allocated.MemoryMB), lv...)
			emit(unallocatedDisk, float64(s.Capacity.DiskMB-s.Allocated.DiskMB), lv...)
		},
	}
}
