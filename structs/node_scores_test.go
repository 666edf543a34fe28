package structs

import (
	"bytes"
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"
)

// NodeScores are a map on every wire (msgpack, the API's JSON codec,
// encoding/json), as Nomad's map[string]float64: what older builds wrote
// into Raft logs and snapshots decodes into them, what they write decodes
// into the api package's map, and the built-in scorers' names are shared.
func TestNodeScores_AreAMapOnTheWire(t *testing.T) {
	type oldMeta struct {
		NodeID    string
		Scores    map[string]float64
		NormScore float64
	}
	old := &oldMeta{NodeID: "n1", Scores: map[string]float64{"binpack": 0.5, "job-anti-affinity": -0.25}, NormScore: 0.125}
	var buf []byte
	must.NoError(t, codec.NewEncoderBytes(&buf, MsgpackHandle).Encode(old))

	var got NodeScoreMeta
	must.NoError(t, Decode(buf, &got))
	must.Eq(t, NodeScores{{Name: "binpack", Score: 0.5}, {Name: "job-anti-affinity", Score: -0.25}}, got.Scores)
	must.Eq(t, "n1", got.NodeID)
	must.Eq(t, 0.125, got.NormScore)
	binpack := scorerNames["binpack"]
	must.True(t, unsafeSameString(binpack, got.Scores[0].Name), must.Sprint("a built-in scorer's decoded name is the shared string"))

	// Written by this build, as a value and behind a pointer: an old
	// reader sees the map.
	for _, v := range []any{got, &got, []*NodeScoreMeta{&got}} {
		out, err := Encode(0, v)
		must.NoError(t, err)
		var back []oldMeta
		if _, ok := v.([]*NodeScoreMeta); ok {
			must.NoError(t, Decode(out[1:], &back))
		} else {
			back = make([]oldMeta, 1)
			must.NoError(t, Decode(out[1:], &back[0]))
		}
		must.Eq(t, old.Scores, back[0].Scores, must.Sprintf("%T", v))
	}

	// The API's JSON codec and encoding/json write an object, which a
	// map reads (as the api package's AllocationMetric does).
	var js bytes.Buffer
	must.NoError(t, codec.NewEncoder(&js, JsonHandle).Encode(&AllocMetric{ScoreMetaData: []*NodeScoreMeta{&got}}))
	var apiMetric struct {
		ScoreMetaData []struct{ Scores map[string]float64 }
	}
	must.NoError(t, json.Unmarshal(js.Bytes(), &apiMetric))
	must.Eq(t, old.Scores, apiMetric.ScoreMetaData[0].Scores)
	must.StrContains(t, js.String(), `"Scores":{`)

	std, err := json.Marshal(got)
	must.NoError(t, err)
	must.StrContains(t, string(std), `"Scores":{"binpack":0.5,"job-anti-affinity":-0.25}`)
	var again NodeScoreMeta
	must.NoError(t, json.Unmarshal(std, &again))
	must.Eq(t, got, again)

	// No scores stay nil, on both codecs.
	out, err := Encode(0, &NodeScoreMeta{NodeID: "n2"})
	must.NoError(t, err)
	var none NodeScoreMeta
	must.NoError(t, Decode(out[1:], &none))
	must.Nil(t, none.Scores)
	std, err = json.Marshal(NodeScoreMeta{NodeID: "n2"})
	must.NoError(t, err)
	must.StrContains(t, string(std), `"Scores":null`)

	v, ok := got.Scores.Get("job-anti-affinity")
	must.True(t, ok)
	must.Eq(t, -0.25, v)
	_, ok = got.Scores.Get("devices")
	must.False(t, ok)
}

// unsafeSameString reports whether a and b share their bytes.
func unsafeSameString(a, b string) bool {
	return a == b && unsafe.StringData(a) == unsafe.StringData(b)
}
