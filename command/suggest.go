package command

import (
	"fmt"
	"sort"
	"strings"
)

// unknownCommand returns the line that names a mistyped command and, when
// one is close enough, the command that was probably meant:
// `Unknown command "jbo". Did you mean "job"?`. It is empty when args
// name a command (the rest are its arguments) or start with a flag.
func unknownCommand(args []string) string {
	var path []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		candidate := strings.Join(append(path, a), " ")
		if _, ok := commands[candidate]; ok {
			return ""
		}
		if !hasSubcommands(candidate) {
			return unknownLine(strings.Join(path, " "), a)
		}
		path = append(path, a)
	}
	return ""
}

// unknownLine is the message for word, which no command under parent
// ("" for the top level) is called.
func unknownLine(parent, word string) string {
	name := func(last string) string { return strings.Join(strings.Fields("nomad "+parent+" "+last), " ") }
	msg := fmt.Sprintf("Unknown command %q.", name(word))
	best := closestCommand(subcommandNames(parent), word)
	if word == "help" {
		// Help is a flag, as in Nomad.
		best = "-help"
	}
	if best != "" {
		msg += fmt.Sprintf(" Did you mean %q?", name(best))
	}
	return msg
}

// subcommandNames lists the words that may follow parent: the next word
// of every command path under it.
func subcommandNames(parent string) []string {
	seen := map[string]bool{}
	prefix := ""
	if parent != "" {
		prefix = parent + " "
	}
	for name := range commands {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		next, _, _ := strings.Cut(strings.TrimPrefix(name, prefix), " ")
		seen[next] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// closestCommand is the name nearest to word by edit distance (a swap of
// two neighbouring letters counts as one edit), or a name that word
// starts; "" when none is close: at most one edit for a word of up to
// four letters, two for a longer one.
func closestCommand(names []string, word string) string {
	best, bestDist := "", 0
	for _, n := range names {
		d := editDistance(word, n)
		if strings.HasPrefix(n, word) && len(word) >= 2 {
			d = min(d, 1)
		}
		if best == "" || d < bestDist {
			best, bestDist = n, d
		}
	}
	limit := 2
	if len([]rune(word)) <= 4 {
		limit = 1
	}
	if best == "" || bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance between a and
// b: insertions, deletions, substitutions and swaps of adjacent runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
