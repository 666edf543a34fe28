package nomadfmt

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/snapshot"
)

// TestWrite_RealNomadReadsIt hands a snapshot archive of Write's stream to
// a real Nomad binary (NOMAD_REAL=<path>): its "operator snapshot
// inspect" counts the records, and its "operator snapshot state" runs
// Nomad's own FSM restore over them, which fails on any type byte or
// record shape Nomad does not take.
func TestWrite_RealNomadReadsIt(t *testing.T) {
	nomad := os.Getenv("NOMAD_REAL")
	if nomad == "" {
		t.Skip("NOMAD_REAL is not set: give it the path of a real Nomad 2.0 binary to check that Nomad reads our snapshots")
	}
	f := newWriteFixture(t)
	stream := writeStream(t, f.store)
	idx, err := f.store.LatestIndex()
	must.NoError(t, err)
	meta := &raft.SnapshotMeta{
		Version: 1, ID: "2-written-by-nomadq", Index: idx, Term: 2, Size: int64(len(stream)), ConfigurationIndex: 1,
		Configuration: raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: "s1", Address: "127.0.0.1:4647"}}},
	}
	path := filepath.Join(t.TempDir(), "nomadq.snap")
	out, err := os.Create(path)
	must.NoError(t, err)
	must.NoError(t, snapshot.Write(out, meta, bytes.NewReader(stream)))
	must.NoError(t, out.Close())

	inspect, err := exec.Command(nomad, "operator", "snapshot", "inspect", path).CombinedOutput()
	must.NoError(t, err, must.Sprintf("nomad operator snapshot inspect: %s", inspect))
	for _, row := range []string{`Job +6 `, `JobVersion +7 `, `PeriodicLaunch +2 `, `WrappedRootKeys +1 `, `Variables +1 `, `Namespace +2 `, `SchedulerConfig +1 `} {
		must.RegexMatch(t, regexp.MustCompile(`(?m)^`+row), string(inspect))
	}

	var stdout, stderr bytes.Buffer
	cmd := exec.Command(nomad, "operator", "snapshot", "state", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	must.NoError(t, cmd.Run(), must.Sprintf("nomad operator snapshot state: %s", stderr.String()))
	var st struct {
		Jobs        []struct{ ID, Namespace string }
		JobVersions []json.RawMessage
		Allocs      []json.RawMessage
		Evals       []json.RawMessage
		Nodes       []json.RawMessage
		RootKeys    []json.RawMessage
		ACLPolicies []json.RawMessage
		ACLTokens   []json.RawMessage
	}
	must.NoError(t, json.Unmarshal(stdout.Bytes(), &st))
	must.Len(t, 6, st.Jobs)
	must.Len(t, 7, st.JobVersions)
	must.Len(t, 1, st.Allocs)
	must.Len(t, 3, st.Evals)
	must.Len(t, 1, st.Nodes)
	must.Len(t, 1, st.RootKeys)
	must.Len(t, 1, st.ACLPolicies)
	must.Len(t, 1, st.ACLTokens)
}
