package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// bigState builds, in memory, a state of jobs one-group batch jobs with
// perJob complete allocs each, spread over 100 nodes (all down, so a new
// leader has no heartbeats to track and no allocs to reschedule), and
// returns it as a snapshot archive as `nomad operator snapshot save`
// writes one.
func bigState(jobs, perJob int) ([]byte, error) {
	st, err := state.NewStateStore()
	if err != nil {
		return nil, err
	}
	index := uint64(10)
	nodes := make([]*structs.Node, 100)
	for i := range nodes {
		nodes[i] = &structs.Node{
			ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Datacenter: "dc1",
			Name: fmt.Sprintf("node-%d", i), NodePool: structs.DefaultNodePool,
			Attributes: map[string]string{"kernel.name": "linux"},
			NodeResources: &structs.NodeResources{
				Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
				Memory: structs.NodeMemoryResources{MemoryMB: 8192},
				Disk:   structs.NodeDiskResources{DiskMB: 100 << 10},
			},
			Drivers:               map[string]*structs.DriverInfo{"mock_driver": {Detected: true, Healthy: true}},
			SchedulingEligibility: structs.NodeSchedulingEligible,
			Status:                structs.NodeStatusDown,
		}
		if err := st.UpsertNode(index, nodes[i]); err != nil {
			return nil, err
		}
		index++
	}
	now := time.Now()
	var pending []*structs.Allocation
	for j := range jobs {
		id := fmt.Sprintf("restore-%d", j)
		job := &structs.Job{
			Region: structs.DefaultRegion, Namespace: structs.DefaultNamespace, ID: id, Name: id,
			Type: structs.JobTypeBatch, Priority: 50, Datacenters: []string{"*"}, NodePool: structs.DefaultNodePool,
			TaskGroups: []*structs.TaskGroup{{
				Name: "g", Count: perJob,
				Tasks: []*structs.Task{{
					Name: "t", Driver: "mock_driver", Config: map[string]any{"run_for": "50ms"},
					Resources: &structs.Resources{CPU: 10, MemoryMB: 10},
				}},
			}},
		}
		job.Canonicalize()
		if err := job.Validate(); err != nil {
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		if err := st.UpsertJob(index, job); err != nil {
			return nil, err
		}
		index++
		stored, err := st.JobByID(nil, job.Namespace, id)
		if err != nil {
			return nil, err
		}
		allocs := make([]*structs.Allocation, perJob)
		for k := range allocs {
			node := nodes[(j*perJob+k)%len(nodes)]
			allocs[k] = &structs.Allocation{
				ID: structs.GenerateUUID(), Namespace: job.Namespace, EvalID: structs.GenerateUUID(),
				Name: fmt.Sprintf("%s.g[%d]", id, k), NodeID: node.ID, NodeName: node.Name,
				JobID: id, Job: stored, TaskGroup: "g",
				DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusComplete,
				AllocatedResources: &structs.AllocatedResources{
					Tasks: map[string]*structs.AllocatedTaskResources{
						"t": {Cpu: structs.AllocatedCpuResources{CpuShares: 10}, Memory: structs.AllocatedMemoryResources{MemoryMB: 10}},
					},
				},
				TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateDead, StartedAt: now, FinishedAt: now}},
				CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
			}
		}
		pending = append(pending, allocs...)
		if len(pending) >= 10_000 || j == jobs-1 {
			// Allocs go in 10,000 at a time: one transaction per job
			// would make building the state the slowest part of the run.
			if err := st.UpsertAllocs(index, pending); err != nil {
				return nil, err
			}
			index++
			pending = pending[:0]
		}
	}
	snap, err := st.Snapshot()
	if err != nil {
		return nil, err
	}
	var stream bytes.Buffer
	if _, err := snap.WriteTo(&stream); err != nil {
		return nil, err
	}
	var archive bytes.Buffer
	meta := &raft.SnapshotMeta{Version: 1, ID: "bench", Index: index, Term: 1, Size: int64(stream.Len())}
	if err := snapshot.Write(&archive, meta, &stream); err != nil {
		return nil, err
	}
	return archive.Bytes(), nil
}

// restoreSection loads 10k jobs / 100k allocs into a real server
// (`operator snapshot restore`), times snapshot saves from it, then starts
// a server from that data dir again and again, timing process start to
// leader-ready (a leader, and the last job served over HTTP), and reads
// its RSS with the state loaded.
func (r *runner) restoreSection() section {
	jobs, perJob := 10_000, 10
	if r.quick {
		jobs = 1000
	}
	allocs := jobs * perJob
	sec := section{
		Title: fmt.Sprintf("Snapshot, restore and memory with %s jobs / %s allocs", commas(int64(jobs)), commas(int64(allocs))),
		Command: "`bin/nomad agent -server -bootstrap-expect 1 -data-dir DIR`; `operator snapshot restore` of a generated state, " +
			"then `operator snapshot save`, then the server stopped and started again from DIR",
	}
	fail := func(err error) section { sec.Skipped = err.Error(); return sec }
	t0 := time.Now()
	archive, err := bigState(jobs, perJob)
	if err != nil {
		return fail(err)
	}
	logf("   built a %.0f MiB snapshot archive in %s", float64(len(archive))/(1<<20), time.Since(t0).Round(time.Millisecond))

	// An empty server's RSS, for the per-alloc figure net of the baseline.
	empty, err := r.startAgent("server-empty", "-server", "-bootstrap-expect", "1", "-data-dir", filepath.Join(r.workDir, "empty"))
	if err != nil {
		return fail(err)
	}
	emptyReady, err := empty.waitLeader(time.Minute, nil)
	if err != nil {
		empty.stop()
		return fail(err)
	}
	baseline, err := empty.rssAfterGC()
	empty.stop()
	if err != nil {
		return fail(err)
	}

	dir := filepath.Join(r.workDir, "restore")
	a, err := r.startAgent("server-restore", "-server", "-bootstrap-expect", "1", "-data-dir", dir)
	if err != nil {
		return fail(err)
	}
	if _, err := a.waitLeader(time.Minute, nil); err != nil {
		a.stop()
		return fail(err)
	}
	t0 = time.Now()
	if _, err := a.client.Operator().SnapshotRestore(bytes.NewReader(archive), nil); err != nil {
		a.stop()
		return fail(fmt.Errorf("snapshot restore: %w", err))
	}
	restoreLive := time.Since(t0)
	var saves []float64
	for range r.runs {
		t0 := time.Now()
		rc, err := a.client.Operator().Snapshot(nil)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		if err != nil {
			a.stop()
			return fail(fmt.Errorf("snapshot save: %w", err))
		}
		saves = append(saves, float64(time.Since(t0).Milliseconds()))
	}
	a.stop()

	last := fmt.Sprintf("restore-%d", jobs-1)
	served := func(c *api.Client) bool {
		j, _, err := c.Jobs().Info(last, nil)
		return err == nil && j != nil
	}
	var ready, rss, perAlloc, net []float64
	for run := range r.runs {
		a, err := r.startAgent(fmt.Sprintf("server-restart-%d", run), "-server", "-bootstrap-expect", "1", "-data-dir", dir)
		if err != nil {
			return fail(err)
		}
		d, err := a.waitLeader(2*time.Minute, served)
		if err != nil {
			a.stop()
			return fail(err)
		}
		m, err := a.rssAfterGC()
		a.stop()
		if err != nil {
			return fail(err)
		}
		ready = append(ready, d.Seconds())
		rss = append(rss, m/(1<<20))
		perAlloc = append(perAlloc, m/float64(allocs)/1024)
		net = append(net, (m-baseline)/float64(allocs)/1024)
		logf("   restart %d: leader-ready in %s, RSS %.0f MiB", run, d.Round(time.Millisecond), m/(1<<20))
	}
	_ = os.RemoveAll(dir)
	sec.Figures = []figure{
		{Name: "restart from the data dir to leader-ready", Runs: ready, Unit: "s", Target: under(5)},
		{Name: "snapshot save (`operator snapshot save`, whole archive over HTTP)", Runs: saves, Unit: "ms"},
		{Name: "server RSS with the state loaded (after GC)", Runs: rss, Unit: "MiB"},
		{Name: "server RSS per 10k allocs in state", Runs: scale(rss, 10_000/float64(allocs)), Unit: "MiB"},
		{Name: "server RSS per alloc in state (whole process)", Runs: perAlloc, Unit: "KiB", Target: under(4)},
		{Name: "server RSS per alloc, net of an empty server's", Runs: net, Unit: "KiB"},
	}
	sec.Notes = append(sec.Notes,
		fmt.Sprintf("The state: %s one-group batch jobs, %d complete allocs each, on 100 nodes; snapshot archive %.0f MiB. Restoring it into the live server (`operator snapshot restore`) took %s (one run). An empty server: leader in %s from its start, RSS after GC %.0f MiB.",
			commas(int64(jobs)), perJob, float64(len(archive))/(1<<20), restoreLive.Round(time.Millisecond), emptyReady.Round(time.Millisecond), baseline/(1<<20)),
		"Leader-ready is from the process's start to the first moment it names a leader and serves the last restored job over HTTP; the server reads the Raft snapshot and replays the log after it.")
	return sec
}
