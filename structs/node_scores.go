package structs

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// NodeScores are one node's scores for a placement, by scorer. On the wire
// (the /v1 API's JSON, msgpack in Raft entries and RPCs) they are a map of
// scorer name to score, as Nomad's NodeScoreMeta.Scores; in memory they
// are a short slice. Every alloc keeps the scores of up to five nodes, and
// as maps of one to four entries they took more than half of its placement
// metric's memory in state: 2,113 bytes for five nodes with two scorers,
// 953 as slices (TestAllocMetric_DecodedScoresStaySmall). Decoding shares
// the built-in scorers' names instead of allocating them.
type NodeScores []NodeScore

// NodeScore is one scorer's score.
type NodeScore struct {
	Name  string
	Score float64
}

// Get returns the named scorer's score.
func (s NodeScores) Get(name string) (float64, bool) {
	for _, e := range s {
		if e.Name == name {
			return e.Score, true
		}
	}
	return 0, false
}

// Map returns the scores as a new map, nil for none.
func (s NodeScores) Map() map[string]float64 {
	if s == nil {
		return nil
	}
	m := make(map[string]float64, len(s))
	for _, e := range s {
		m[e.Name] = e.Score
	}
	return m
}

// NodeScoresFromMap returns the scores of m, sorted by name; nil for a
// nil map.
func NodeScoresFromMap(m map[string]float64) NodeScores {
	if m == nil {
		return nil
	}
	s := make(NodeScores, 0, len(m))
	for name, score := range m {
		s = append(s, NodeScore{Name: scorerName(name), Score: score})
	}
	slices.SortFunc(s, func(a, b NodeScore) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// scorerNames are the names the scheduler scores by; decoded scores share
// these strings.
var scorerNames = map[string]string{}

func init() {
	for _, n := range []string{"binpack", "job-anti-affinity", "node-reschedule-penalty", "node-affinity", "allocation-spread", "devices", "preemption"} {
		scorerNames[n] = n
	}
}

func scorerName(name string) string {
	if shared, ok := scorerNames[name]; ok {
		return shared
	}
	return name
}

// CodecEncodeSelf writes the scores as a map.
func (s *NodeScores) CodecEncodeSelf(e *codec.Encoder) {
	e.MustEncode(s.Map())
}

// CodecDecodeSelf reads the scores from a map.
func (s *NodeScores) CodecDecodeSelf(d *codec.Decoder) {
	var m map[string]float64
	d.MustDecode(&m)
	*s = NodeScoresFromMap(m)
}

// MarshalJSON writes the scores as a JSON object.
func (s NodeScores) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.Map())
}

// UnmarshalJSON reads the scores from a JSON object.
func (s *NodeScores) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*s = NodeScoresFromMap(m)
	return nil
}
