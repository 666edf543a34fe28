package apiconv

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestFields_Documented keeps website/jobspec.md in step with the fields
// table: every field has one row there, whose status says what the code
// does. Flipping a field from refused to mapped means changing its row to
// "supported" as well.
func TestFields_Documented(t *testing.T) {
	doc, err := os.ReadFile("../website/jobspec.md")
	must.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| [^|]* \\| `([A-Za-z]+\\.[A-Za-z]+)` \\| ([^|]*) \\|$")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		_, dup := documented[m[1]]
		must.False(t, dup, must.Sprintf("%s has two rows", m[1]))
		documented[m[1]] = m[2]
	}
	want := map[ruleKind]string{
		kindMapped:  "supported",
		kindRefused: "refused",
		kindWarned:  "warned",
		kindFixed:   "only ",
		kindIgnored: "ignored",
	}
	var wrong []string
	for key, r := range fields {
		status, ok := documented[key]
		switch {
		case !ok:
			wrong = append(wrong, key+": no row")
		case !strings.HasPrefix(status, want[r.kind]):
			wrong = append(wrong, key+": the row says "+status+", the code "+want[r.kind])
		case r.kind == kindFixed && !strings.HasPrefix(status, "only "+showAll(r.values)):
			wrong = append(wrong, key+": the row says "+status+", the code only "+showAll(r.values))
		}
		delete(documented, key)
	}
	for key := range documented {
		wrong = append(wrong, key+": a row for a field the table does not have")
	}
	sort.Strings(wrong)
	must.SliceEmpty(t, wrong, must.Sprint("website/jobspec.md and apiconv/fields.go disagree"))
}
