package docstest

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// shortIDRE is an 8-character ID as the CLI prints it, which may
	// happen to be all digits.
	shortIDRE = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	hexRE     = regexp.MustCompile(`\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`)
	timeRE    = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?( [A-Z]{3,4})?`)
	durRE     = regexp.MustCompile(`\b(\d+(\.\d+)?(ns|µs|us|ms|s|m|h|d))+\b`)
	numRE     = regexp.MustCompile(`\d+(\.\d+)?`)
	spaceRE   = regexp.MustCompile(`\s+`)
)

// normalize makes a line of output comparable across runs: IDs, times,
// durations and numbers become placeholders and runs of blanks (table
// alignment) one space.
func normalize(line string) string {
	line = uuidRE.ReplaceAllString(line, "<id>")
	line = timeRE.ReplaceAllString(line, "<time>")
	line = shortIDRE.ReplaceAllString(line, "<id>")
	line = hexRE.ReplaceAllString(line, "<id>")
	line = durRE.ReplaceAllString(line, "<dur>")
	line = numRE.ReplaceAllString(line, "<n>")
	return strings.TrimSpace(spaceRE.ReplaceAllString(line, " "))
}

// MatchOutput checks that every non-blank line of want appears in got, in
// order, after both are normalized; "..." in a wanted line matches
// anything, nothing included. It returns nil or an error naming the first line not found.
func MatchOutput(want []string, got string) error {
	gotLines := strings.Split(got, "\n")
	for i := range gotLines {
		gotLines[i] = normalize(gotLines[i])
	}
	at := 0
	for _, w := range want {
		nw := normalize(w)
		if nw == "" {
			continue
		}
		// "..." (with the blank before it) stands for anything, nothing
		// included.
		pattern := strings.ReplaceAll(regexp.QuoteMeta(nw), ` \.\.\.`, ".*")
		re := regexp.MustCompile("^" + strings.ReplaceAll(pattern, `\.\.\.`, ".*") + "$")
		found := false
		for at < len(gotLines) {
			ok := re.MatchString(gotLines[at])
			at++
			if ok {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("the documented line %q is not in the output (in order, IDs, times and numbers ignored)", strings.TrimSpace(w))
		}
	}
	return nil
}
