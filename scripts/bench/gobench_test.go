package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/shoenig/test/must"
)

func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
goarch: amd64
pkg: github.com/nomadq/nomadq/scheduler
BenchmarkPlacement/nodes=1000/type=batch/spread=false-2         	       1	 280049033 ns/op	        28.00 us/placement
BenchmarkPlacement/nodes=1000/type=batch/spread=false-2         	       1	 290049033 ns/op	        29.00 us/placement
BenchmarkUpsertAllocs10kOneTxn-2       	       1	 427605136 ns/op	     23386 allocs/s
PASS
`)
	res, err := parseBench(out)
	must.NoError(t, err)
	must.Eq(t, []float64{28, 29}, res.get("BenchmarkPlacement/nodes=1000/type=batch/spread=false", "us/placement"))
	must.Eq(t, []float64{23386}, res.get("BenchmarkUpsertAllocs10kOneTxn", "allocs/s"))
	must.Eq(t, []float64{427605136}, res.get("BenchmarkUpsertAllocs10kOneTxn", "ns/op"))
}

func TestMedianAndNum(t *testing.T) {
	must.Eq(t, 2, median([]float64{3, 1, 2}))
	must.Eq(t, 2.5, median([]float64{4, 1, 2, 3}))
	must.Eq(t, "1,234", num(1234.4))
	must.Eq(t, "5", num(5))
	must.Eq(t, "0.25", num(0.25))
}

func TestVerdict_LinksWhyWhenNotMet(t *testing.T) {
	f := figure{Name: "rate", Runs: []float64{900, 1000, 1100}, Target: atLeast(1000).because("notes.md#why")}
	must.Eq(t, "met", verdict(f))
	f.Runs = []float64{800, 900, 1100}
	must.Eq(t, "**not met** ([why](notes.md#why))", verdict(f))
	f.Target = atLeast(1000)
	must.Eq(t, "**not met**", verdict(f))
	must.Eq(t, "no value", verdict(figure{Target: under(1)}))
}

// headingAnchor is the anchor a Markdown renderer (GitHub's rules) gives
// a heading: lower case, punctuation dropped, spaces as hyphens.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestWhyNotLinks_NameSections(t *testing.T) {
	must.Eq(t, "why-not-the-drains-rss-growth", headingAnchor("Why not: the drain's RSS growth"))
	for _, link := range whyNotLinks {
		file, anchor, ok := strings.Cut(link, "#")
		must.True(t, ok, must.Sprint(link))
		text, err := os.ReadFile(filepath.Join("..", "..", "website", file))
		must.NoError(t, err)
		found := false
		for _, line := range strings.Split(string(text), "\n") {
			if h, ok := strings.CutPrefix(line, "#"); ok && headingAnchor(strings.TrimLeft(h, "#")) == anchor {
				found = true
			}
		}
		must.True(t, found, must.Sprintf("%s: no heading in website/%s has the anchor %q", link, file, anchor))
	}
}
