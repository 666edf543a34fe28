package nomadfmt

import (
	"bytes"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"
)

// stream builds a Nomad FSM snapshot stream: the empty header, then each
// record's type byte and object. It returns the stream and each record's
// encoded size (type byte included).
func stream(t *testing.T, records ...any) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	enc := codec.NewEncoder(&buf, Handle)
	must.NoError(t, enc.Encode(struct{}{}))
	var sizes []int64
	for i := 0; i < len(records); i += 2 {
		start := buf.Len()
		buf.WriteByte(byte(records[i].(SnapshotType)))
		must.NoError(t, enc.Encode(records[i+1]))
		sizes = append(sizes, int64(buf.Len()-start))
	}
	return buf.Bytes(), sizes
}

func TestInspect_CountsPerType(t *testing.T) {
	type job struct {
		ID, Namespace string
		Meta          map[string]string
	}
	raw, sizes := stream(t,
		JobSnapshot, job{ID: "a", Namespace: "default"},
		IndexSnapshot, map[string]any{"Key": "jobs", "Value": uint64(12)},
		JobSnapshot, job{ID: "bbbbbbbbbbbbbbbbbbbb", Namespace: "default", Meta: map[string]string{"k": "v"}},
		SnapshotType(99), []string{"ours"},
		NamespaceSnapshot, map[string]any{"Name": "default"},
	)
	must.Eq(t, 0x80, raw[0])
	stats, total, err := Inspect(bytes.NewReader(raw))
	must.NoError(t, err)
	must.Eq(t, TypeCount{Name: "Total", Count: 5, Size: int64(len(raw))}, total)

	// The header's byte counts with the first record, as in Nomad's
	// inspect, so that the sizes add up to the stream.
	want := map[string]TypeCount{
		"Job":         {Type: JobSnapshot, Name: "Job", Count: 2, Size: 1 + sizes[0] + sizes[2]},
		"Index":       {Type: IndexSnapshot, Name: "Index", Count: 1, Size: sizes[1]},
		"Unknown(99)": {Type: 99, Name: "Unknown(99)", Count: 1, Size: sizes[3]},
		"Namespace":   {Type: NamespaceSnapshot, Name: "Namespace", Count: 1, Size: sizes[4]},
	}
	must.Len(t, len(want), stats)
	var sum int64
	for i, s := range stats {
		must.Eq(t, want[s.Name], s)
		sum += s.Size
		if i > 0 {
			prev := stats[i-1]
			must.True(t, prev.Size > s.Size || prev.Size == s.Size && prev.Name < s.Name,
				must.Sprintf("%v listed before %v", prev, s))
		}
	}
	must.Eq(t, total.Size, sum)
	must.Eq(t, "Job", stats[0].Name)
}

func TestInspect_HeaderOnly(t *testing.T) {
	stats, total, err := Inspect(bytes.NewReader([]byte{0x80}))
	must.NoError(t, err)
	must.SliceEmpty(t, stats)
	must.Eq(t, 0, total.Count)
}

func TestInspect_BadStreams(t *testing.T) {
	raw, _ := stream(t,
		JobSnapshot, map[string]any{"ID": "a", "Namespace": "default"},
		EvalSnapshot, map[string]any{"ID": "e"},
	)
	cases := []struct {
		name, in, err string
	}{
		{"empty", "", "read snapshot header"},
		{"cut inside a record", string(raw[:len(raw)-3]), "read snapshot record 1 (Eval)"},
		{"type byte without its object", string(raw) + "\x01", "read snapshot record 2 (Job)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Inspect(bytes.NewReader([]byte(tc.in)))
			must.ErrorContains(t, err, tc.err)
		})
	}
}
