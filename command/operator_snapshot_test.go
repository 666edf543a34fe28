package command

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent"
	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/nomad/snapshot"
)

// quickJob is a batch job that a non-dev agent (raw_exec, no mock
// driver) runs to completion at once.
const quickJob = `job "quick" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// clusterIDs is what a snapshot must bring back: the IDs of every job,
// alloc, eval, node, namespace and root key.
type clusterIDs struct {
	jobs, allocs, evals, nodes, namespaces, keys []string
}

func readClusterIDs(t *testing.T, c *api.Client) clusterIDs {
	t.Helper()
	var ids clusterIDs
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)
	for _, j := range jobs {
		ids.jobs = append(ids.jobs, j.Namespace+"/"+j.ID)
	}
	allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)
	for _, a := range allocs {
		ids.allocs = append(ids.allocs, a.ID)
	}
	evals, _, err := c.Evaluations().List(&api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)
	for _, e := range evals {
		ids.evals = append(ids.evals, e.ID)
	}
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	for _, n := range nodes {
		ids.nodes = append(ids.nodes, n.ID)
	}
	nss, _, err := c.Namespaces().List(nil)
	must.NoError(t, err)
	for _, ns := range nss {
		ids.namespaces = append(ids.namespaces, ns.Name)
	}
	keys, _, err := c.Keyring().List(nil)
	must.NoError(t, err)
	for _, k := range keys {
		ids.keys = append(ids.keys, k.KeyID)
	}
	for _, l := range [][]string{ids.jobs, ids.allocs, ids.evals, ids.nodes, ids.namespaces, ids.keys} {
		slices.Sort(l)
	}
	return ids
}

// Save a 1-server cluster's state, stop it, wipe its data dir, start a
// new one there, restore: every job, alloc, eval, node, namespace and key
// is back.
func TestOperatorSnapshot_SaveWipeRestore(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	dataDir := filepath.Join(t.TempDir(), "data")
	onDisk := func(c *config.Config) {
		c.DevMode = false
		c.DataDir = dataDir
	}
	first, err := agent.StartLocal(onDisk, agenttest.Log(), 20*time.Second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = first.Shutdown() })
	addr := first.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	_, err = c.Namespaces().Register(&api.Namespace{Name: "team", Description: "kept by the snapshot"}, nil)
	must.NoError(t, err)
	quick := filepath.Join(t.TempDir(), "quick.nomad.hcl")
	must.NoError(t, os.WriteFile(quick, []byte(quickJob), 0o600))
	for _, args := range [][]string{
		{"job", "run", quick},
		{"job", "run", "-namespace", "team", quick},
	} {
		code, out, errOut := cli(t, addr, args...)
		must.Eq(t, 0, code, must.Sprint(args, out, errOut))
	}
	before := readClusterIDs(t, c)
	must.Len(t, 2, before.jobs)
	must.Len(t, 2, before.allocs)
	must.SliceContains(t, before.namespaces, "team")
	must.SliceNotEmpty(t, before.keys)

	snap := filepath.Join(t.TempDir(), "backup.snap")
	code, out, errOut := cli(t, addr, "operator", "snapshot", "save", snap)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "State file written to "+snap+"\n", out)
	code, _, errOut = cli(t, addr, "operator", "snapshot", "save", snap)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Destination file already exists")

	t.Run("inspect", func(t *testing.T) {
		code, out, errOut := run(t, "", "operator", "snapshot", "inspect", snap)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.RegexMatch(t, regexp.MustCompile(`(?s)^Created = \S+\nID      = \d+-\d+-\d+\nSize    = [\d.]+ (B|KiB|MiB)\nIndex   = \d+\nTerm    = \d+\nVersion = 1\n\n`), out)
		must.RegexMatch(t, regexp.MustCompile(`(?m)^Type +Count +Size$`), out)
		must.RegexMatch(t, regexp.MustCompile(`(?m)^JobSnapshot +2 +`), out)
		must.RegexMatch(t, regexp.MustCompile(`(?m)^RootKeySnapshot +1 +`), out)
		must.RegexMatch(t, regexp.MustCompile(`(?m)^AllocSnapshot +2 +`), out)
		must.RegexMatch(t, regexp.MustCompile(`(?m)^NamespaceSnapshot +2 +`), out)
		must.RegexMatch(t, regexp.MustCompile(`(?m)^Total +\d+ +`), out)
		code, out, _ = run(t, "", "operator", "snapshot", "inspect", "-json", snap)
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"Name": "JobSnapshot"`)
		code, _, errOut = run(t, "", "operator", "snapshot", "inspect", filepath.Join(t.TempDir(), "nope.snap"))
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "no such file")
	})

	must.NoError(t, first.Shutdown())
	must.NoError(t, os.RemoveAll(dataDir))

	second, err := agent.StartLocal(onDisk, agenttest.Log(), 20*time.Second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = second.Shutdown() })
	addr = second.HTTPAddr()
	c, err = api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	fresh := readClusterIDs(t, c)
	must.SliceEmpty(t, fresh.jobs)

	// A damaged archive is refused before Raft sees it; the server keeps
	// leading and its state is unchanged.
	bad := filepath.Join(t.TempDir(), "bad.snap")
	raw, err := os.ReadFile(snap)
	must.NoError(t, err)
	must.NoError(t, os.WriteFile(bad, raw[:len(raw)/2], 0o600))
	code, _, errOut = cli(t, addr, "operator", "snapshot", "restore", bad)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "400")
	must.StrContains(t, errOut, "failed to restore from snapshot")
	must.Eq(t, fresh, readClusterIDs(t, c))
	// So is an intact archive whose state stream does not decode: Raft
	// would stop the server if its FSM failed the restore.
	var garbled bytes.Buffer
	must.NoError(t, snapshot.Write(&garbled, &raft.SnapshotMeta{Version: 1, ID: "1-2-3", Index: 2, Term: 1, Size: 5}, strings.NewReader("\x01\x02xyz")))
	must.NoError(t, os.WriteFile(bad, garbled.Bytes(), 0o600))
	code, _, errOut = cli(t, addr, "operator", "snapshot", "restore", bad)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "400")
	must.StrContains(t, errOut, "failed to restore from snapshot: restore snapshot record 0")
	must.Eq(t, fresh, readClusterIDs(t, c))

	code, out, errOut = cli(t, addr, "operator", "snapshot", "restore", snap)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Snapshot Restored\n", out)

	after := readClusterIDs(t, c)
	must.Eq(t, before.jobs, after.jobs)
	must.Eq(t, before.allocs, after.allocs)
	must.Eq(t, before.evals, after.evals)
	must.Eq(t, before.namespaces, after.namespaces)
	must.Eq(t, before.keys, after.keys)
	// The old node is back (the new agent's client registers again at its
	// next heartbeat, which the servers answer with "node not found").
	for _, n := range before.nodes {
		must.SliceContains(t, after.nodes, n)
	}

	// The restored cluster takes writes: a new job is registered and
	// evaluated.
	newJob := filepath.Join(t.TempDir(), "after.nomad.hcl")
	must.NoError(t, os.WriteFile(newJob, []byte(strings.Replace(quickJob, `job "quick"`, `job "after"`, 1)), 0o600))
	code, out, errOut = cli(t, addr, "job", "run", "-detach", "-namespace", "team", newJob)
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	evalID := strings.TrimPrefix(strings.TrimSpace(out[strings.Index(out, "Evaluation ID: "):]), "Evaluation ID: ")
	waitFor(t, "the new job's evaluation to complete", 10*time.Second, func() error {
		e, _, err := c.Evaluations().Info(evalID, nil)
		if err != nil {
			return err
		}
		if e.Status != "complete" {
			return fmt.Errorf("eval %s", e.Status)
		}
		return nil
	})
}
