package docstest

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Kind is what the test does with a block.
type Kind int

const (
	// KindUnknown is a block the test cannot classify and no marker
	// explains: the test fails on it.
	KindUnknown Kind = iota
	// KindSkip is a block marked skip, with its reason.
	KindSkip
	// KindFile is saved under its marked name for the page's later
	// commands.
	KindFile
	// KindUsage is a command synopsis: each `nomad ...` line's command
	// must answer -h with exit 0.
	KindUsage
	// KindCommands is shell commands, each run in page order.
	KindCommands
	// KindJob is a whole job file: `nomad job validate` must accept it.
	KindJob
	// KindJobFragment is a group, task, template, check or variable block:
	// wrapped into a job, which
	// `nomad job validate` must accept.
	KindJobFragment
	// KindAgentConfig is an agent configuration file: `nomad config
	// validate` must accept it.
	KindAgentConfig
	// KindJSON is a JSON document: it must parse.
	KindJSON
	// KindOutput is the printed output of the previous block's last
	// command, compared loosely.
	KindOutput
)

// Block is one fenced code block of a page.
type Block struct {
	Page string // path relative to the repo root
	Line int    // line of the opening fence, from 1
	Lang string // the fence's info string: "hcl", "json", "" ...
	Text string // the content, without the fence's indentation

	// prev is the last line before the fence that is neither blank nor a
	// marker; a synopsis follows the page's "# " title.
	prev string

	Skip   string // reason, when marked skip
	File   string // name, when marked file
	Output bool   // marked output
	Exit   int    // marked exit code of the last command (0 unless marked)
	Exits  []int  // marked exit codes of each command, in order
	Usage  bool   // marked usage
	ACL    bool   // marked acl: run against the agent with ACLs on
	// Setup are commands run, unshown, before the block: what its
	// commands need to exist (a job to inspect, a file to read).
	Setup []string
	// After are commands run, unshown, after the block: to undo what its
	// setup made, so later pages start from an ordinary agent.
	After []string
	// Subs replace a placeholder the page shows (an ID such as 3f1c, or
	// "<new key>" quoted) in this and the page's later commands with what
	// a command prints.
	Subs    []Sub
	markErr error // a marker that does not parse
}

// Where names the block for messages: page:line.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.Page, b.Line) }

// Sub is a "sub WORD COMMAND" marker: WORD in commands stands for what
// COMMAND prints.
type Sub struct {
	Word, Command string
}

// Command is one shell command of a block and the output printed under it
// (the lines after a "$ " line up to the next one).
type Command struct {
	Line   string
	Output []string
}

var (
	fenceRE  = regexp.MustCompile("^([ \t]*)(```+)[ \t]*([A-Za-z0-9_+-]*)")
	markerRE = regexp.MustCompile(`^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$`)
)

// ParseBlocks returns the fenced code blocks of a page with their markers.
func ParseBlocks(page, text string) ([]Block, error) {
	var (
		blocks  []Block
		markers []string
		prev    string
		cur     *Block
		indent  string
		fence   string
		body    []string
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if cur != nil {
			if t := strings.TrimSpace(line); strings.HasPrefix(t, fence) && strings.Trim(t, "`") == "" {
				cur.Text = strings.Join(body, "\n")
				blocks = append(blocks, *cur)
				cur, body, markers = nil, nil, nil
				continue
			}
			body = append(body, strings.TrimPrefix(line, indent))
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			cur = &Block{Page: page, Line: n, Lang: strings.ToLower(m[3]), prev: prev}
			indent, fence = m[1], m[2]
			cur.applyMarkers(markers)
			continue
		}
		if m := markerRE.FindStringSubmatch(line); m != nil {
			markers = append(markers, m[1])
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		prev, markers = line, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: the code block opened there is never closed", cur.Where())
	}
	return blocks, nil
}

var skipRE = regexp.MustCompile(`^skip\s*\((.*)\)$`)

func (b *Block) applyMarkers(markers []string) {
	for _, m := range markers {
		// setup and sub hold a shell command, which may contain ";".
		if rest, ok := strings.CutPrefix(m, "setup "); ok {
			b.Setup = append(b.Setup, strings.TrimSpace(rest))
			continue
		}
		if rest, ok := strings.CutPrefix(m, "after "); ok {
			b.After = append(b.After, strings.TrimSpace(rest))
			continue
		}
		if rest, ok := strings.CutPrefix(m, "sub "); ok {
			// A placeholder with blanks is quoted: sub "<new key>" ...
			rest = strings.TrimSpace(rest)
			word, cmd, _ := strings.Cut(rest, " ")
			if q, ok := strings.CutPrefix(rest, `"`); ok {
				word, cmd, _ = strings.Cut(q, `"`)
			}
			if word == "" || strings.TrimSpace(cmd) == "" {
				b.markErr = fmt.Errorf("marker %q: sub needs a word and a command: sub 3f1c nomad job allocs -t ... hello", m)
				continue
			}
			b.Subs = append(b.Subs, Sub{Word: word, Command: strings.TrimSpace(cmd)})
			continue
		}
		for _, d := range splitDirectives(m) {
			d = strings.TrimSpace(d)
			switch {
			case d == "":
			case strings.HasPrefix(d, "skip"):
				sm := skipRE.FindStringSubmatch(d)
				if sm == nil || strings.TrimSpace(sm[1]) == "" {
					b.markErr = fmt.Errorf("marker %q: skip needs a reason in parentheses: skip (why)", d)
					continue
				}
				b.Skip = strings.TrimSpace(sm[1])
			case strings.HasPrefix(d, "file "):
				name := strings.TrimSpace(strings.TrimPrefix(d, "file "))
				if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
					b.markErr = fmt.Errorf("marker %q: file needs a relative name inside the page's directory", d)
					continue
				}
				b.File = name
			case d == "output":
				b.Output = true
			case d == "usage":
				b.Usage = true
			case d == "acl":
				b.ACL = true
			case strings.HasPrefix(d, "exits "):
				b.Exits = nil
				for _, f := range strings.Fields(strings.TrimPrefix(d, "exits ")) {
					code, err := strconv.Atoi(f)
					if err != nil || code < 0 {
						b.markErr = fmt.Errorf("marker %q: exits needs a code per command: exits 0 1 0", d)
						break
					}
					b.Exits = append(b.Exits, code)
				}
			case strings.HasPrefix(d, "exit "):
				code, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(d, "exit ")))
				if err != nil || code < 0 {
					b.markErr = fmt.Errorf("marker %q: exit needs a code: exit 1", d)
					continue
				}
				b.Exit = code
			default:
				b.markErr = fmt.Errorf("marker %q: unknown directive (skip (why), file NAME, output, exit N, exits N N..., usage, acl, setup CMD, after CMD, sub WORD CMD)", d)
			}
		}
	}
}

// splitDirectives splits a marker at the ";" outside parentheses, so a
// skip reason may hold one.
func splitDirectives(m string) []string {
	var (
		out   []string
		depth int
		start int
	)
	for i, r := range m {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth == 0 {
				out = append(out, m[start:i])
				start = i + 1
			}
		}
	}
	return append(out, m[start:])
}

// MarkerError is the error of a marker that does not parse, or nil.
func (b Block) MarkerError() error { return b.markErr }

// agentConfigKeys are the top-level keys that make an HCL block an agent
// configuration file.
var agentConfigKeys = map[string]bool{
	"acl": true, "server": true, "client": true, "plugin": true, "telemetry": true,
	"tls": true, "data_dir": true, "datacenter": true, "region": true, "bind_addr": true,
	"ports": true, "addresses": true, "advertise": true, "log_level": true, "limits": true,
	"autopilot": true, "keyring": true, "ui": true, "leave_on_interrupt": true,
	"leave_on_terminate": true, "enable_debug": true, "log_json": true, "log_file": true,
}

// commandWords are the first words of a line that make an unmarked block
// without "$ " prompts a block of commands.
var commandWords = map[string]bool{"nomad": true, "curl": true, "export": true, "cat": true, "echo": true}

var envAssignRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)

// Classify says what the test does with the block.
func (b Block) Classify() Kind {
	switch {
	case b.Skip != "":
		return KindSkip
	case b.File != "":
		return KindFile
	case b.Usage || (strings.HasPrefix(b.prev, "# ") && strings.Contains(b.Page, "commands/") && hasNomadLine(b.Text)):
		return KindUsage
	}
	if b.Output && !hasPrompt(b.Text) {
		return KindOutput
	}
	switch b.Lang {
	case "hcl":
		first := firstWord(b.Text)
		switch {
		case isJob(b.Text):
			return KindJob
		case first == "group" || first == "task" || first == "template" || first == "check" || first == "variable":
			return KindJobFragment
		case agentConfigKeys[first]:
			return KindAgentConfig
		}
		return KindUnknown
	case "json":
		return KindJSON
	case "", "sh", "shell", "console", "bash":
		if hasPrompt(b.Text) {
			return KindCommands
		}
		if plainCommands(b.Text) {
			return KindCommands
		}
	}
	return KindUnknown
}

var jobRE = regexp.MustCompile(`(?m)^\s*job\s+"`)

// isJob reports whether an HCL text is a job file.
func isJob(text string) bool { return jobRE.MatchString(text) }

func hasPrompt(text string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "$ ") {
			return true
		}
	}
	return false
}

func hasNomadLine(text string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "nomad") {
			return true
		}
	}
	return false
}

func firstWord(text string) string {
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "//") {
			continue
		}
		return strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' || r == '=' || r == '{' || r == '"' })[0]
	}
	return ""
}

// plainCommands reports whether every line of a block without prompts is
// a command, a continuation of one, or a comment.
func plainCommands(text string) bool {
	cont, any := false, false
	for l := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(l)
		if cont {
			cont = strings.HasSuffix(t, `\`)
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(t)
		for len(f) > 1 && envAssignRE.MatchString(f[0]) {
			f = f[1:]
		}
		if !commandWords[f[0]] {
			return false
		}
		any = true
		cont = strings.HasSuffix(t, `\`)
	}
	return any
}

// Commands returns the block's commands in order: the "$ " lines (and
// their "\" continuations) with the output printed under each, or, in a
// block without prompts, every line that is not a comment.
func (b Block) Commands() []Command {
	var (
		cmds   []Command
		cont   bool
		prompt = hasPrompt(b.Text)
	)
	for l := range strings.SplitSeq(b.Text, "\n") {
		t := strings.TrimSpace(l)
		if cont {
			cmds[len(cmds)-1].Line += "\n" + t
			cont = strings.HasSuffix(t, `\`)
			continue
		}
		switch {
		case prompt && strings.HasPrefix(t, "$ "):
			t = strings.TrimPrefix(t, "$ ")
		case prompt:
			if len(cmds) > 0 {
				cmds[len(cmds)-1].Output = append(cmds[len(cmds)-1].Output, l)
			}
			continue
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		}
		cmds = append(cmds, Command{Line: t})
		cont = strings.HasSuffix(t, `\`)
	}
	return cmds
}

// UsageCommands returns, for a synopsis block, the command words of each
// `nomad ...` line ("job", "run" for `nomad job run [options] <path>`).
func (b Block) UsageCommands() [][]string {
	var out [][]string
	for l := range strings.SplitSeq(b.Text, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "nomad" {
			continue
		}
		var words []string
		for _, w := range f[1:] {
			if strings.ContainsAny(w[:1], "[<-|(") || strings.Contains(w, "|") {
				break
			}
			words = append(words, w)
		}
		out = append(out, words)
	}
	return out
}
