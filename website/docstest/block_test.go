package docstest

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseBlocks_Classify(t *testing.T) {
	cases := []struct {
		name string
		page string
		text string
		want Kind
	}{
		{"prompted commands", "website/x.md", "```\n$ nomad job run x.hcl\nok\n```\n", KindCommands},
		{"plain commands", "website/x.md", "```shell\nnomad job status \\\n  hello\ncurl -s $NOMAD_ADDR/v1/jobs\n```\n", KindCommands},
		{"output without a command", "website/x.md", "```\nError: something\n```\n", KindUnknown},
		{"job", "website/x.md", "```hcl\njob \"a\" {\n}\n```\n", KindJob},
		{"task fragment", "website/x.md", "```hcl\ntask \"t\" {\n}\n```\n", KindJobFragment},
		{"agent config", "website/x.md", "```hcl\nserver {\n  enabled = true\n}\n```\n", KindAgentConfig},
		{"policy is not classified", "website/x.md", "```hcl\nnamespace \"default\" {\n}\n```\n", KindUnknown},
		{"go", "website/x.md", "```go\nx := 1\n```\n", KindUnknown},
		{"json", "website/x.md", "```json\n{}\n```\n", KindJSON},
		{"synopsis under the title", "website/commands/x.md", "# nomad x\n\n```\nnomad x [options] <y>\n```\n", KindUsage},
		{"skip with a reason", "website/x.md", "<!-- docs-test: skip (needs docker) -->\n```go\nx\n```\n", KindSkip},
		{"marker across a blank line", "website/x.md", "<!-- docs-test: skip (why) -->\n\n```go\nx\n```\n", KindSkip},
		{"marker before text does not count", "website/x.md", "<!-- docs-test: skip (why) -->\ntext\n```go\nx\n```\n", KindUnknown},
		{"file", "website/x.md", "<!-- docs-test: file a.hcl -->\n```hcl\nnamespace \"default\" {}\n```\n", KindFile},
		{"output block", "website/x.md", "<!-- docs-test: output -->\n```\nJob validation successful\n```\n", KindOutput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := ParseBlocks(tc.page, tc.text)
			must.NoError(t, err)
			must.Len(t, 1, blocks)
			must.NoError(t, blocks[0].MarkerError())
			must.Eq(t, tc.want, blocks[0].Classify())
		})
	}
}

func TestParseBlocks_MarkerErrors(t *testing.T) {
	for _, m := range []string{"skip", "skip ()", "exit x", "exits 0 x", "file ../a", "sub 3f1c", "frobnicate"} {
		t.Run(m, func(t *testing.T) {
			blocks, err := ParseBlocks("x.md", "<!-- docs-test: "+m+" -->\n```\n$ true\n```\n")
			must.NoError(t, err)
			must.Error(t, blocks[0].MarkerError())
		})
	}
}

func TestParseBlocks_Directives(t *testing.T) {
	text := "<!-- docs-test: setup echo a; echo b -->\n" +
		"<!-- docs-test: after echo c -->\n" +
		"<!-- docs-test: sub \"<new key>\" nomad operator gossip keyring generate -->\n" +
		"<!-- docs-test: skip (a; b); exit 2 -->\n" +
		"   ```\n   $ nomad x \\\n     -y\n   out\n   $ nomad z\n   ```\n"
	blocks, err := ParseBlocks("x.md", text)
	must.NoError(t, err)
	b := blocks[0]
	must.NoError(t, b.MarkerError())
	must.Eq(t, []string{"echo a; echo b"}, b.Setup)
	must.Eq(t, []string{"echo c"}, b.After)
	must.Eq(t, []Sub{{Word: "<new key>", Command: "nomad operator gossip keyring generate"}}, b.Subs)
	must.Eq(t, "a; b", b.Skip)
	must.Eq(t, 2, b.Exit)
	must.Eq(t, []Command{{Line: "nomad x \\\n-y", Output: []string{"out"}}, {Line: "nomad z"}}, b.Commands())
}

func TestParseBlocks_Unclosed(t *testing.T) {
	_, err := ParseBlocks("x.md", "```\n$ nomad x\n")
	must.ErrorContains(t, err, "x.md:1")
}

func TestMatchOutput(t *testing.T) {
	got := "Dispatched Job ID = render/dispatch-1764672999-52907979\nEvaluation ID     = 0a1b2c3d\n\n==> 2026-12-07T02:00:00Z: Monitoring evaluation \"0a1b2c3d\"\n    Allocation \"77aa\" created\n"
	must.NoError(t, MatchOutput([]string{
		"Dispatched Job ID = render/dispatch-1764672000-1a2b3c4d",
		"Evaluation ID = 5e6f7a8b",
		"...",
		"==> 2026-12-02T11:00:00Z: Monitoring evaluation \"5e6f7a8b\"",
	}, got))
	must.ErrorContains(t, MatchOutput([]string{"Evaluation ID = 5e6f7a8b", "Dispatched Job ID = x"}, got), `"Dispatched Job ID = x"`)
	must.Error(t, MatchOutput([]string{"Job validation successful"}, got))
	must.NoError(t, MatchOutput([]string{`Allocation "1a2b" created ...`, `Allocation "1a2b" ...`}, "Allocation \"77aa\" created\nAllocation \"77aa\""))
}
