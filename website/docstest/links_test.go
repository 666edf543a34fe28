package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// outsideRE is a path in text that leaves the repository: a parent
	// directory of the root, or an absolute path on the writer's machine.
	outsideRE = regexp.MustCompile("`(\\.\\./[^`]*|/(home|work|Users|root)/[^`]*)`")
)

// TestDocs_LinksStayInRepo fails on a relative link in README.md or a
// website/ page whose target does not exist or lies outside the
// repository, and on a path in backticks in README.md that points
// outside it: the docs must work from a fresh clone.
func TestDocs_LinksStayInRepo(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages(t) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(root, filepath.Dir(page), target)
			if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %q points outside the repository", page, m[1])
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %q: %v", page, m[1], err)
			}
		}
		if page != "README.md" {
			// The pages' "../" paths are inside an allocation's
			// directory, not the repository's.
			continue
		}
		for _, m := range outsideRE.FindAllStringSubmatch(string(text), -1) {
			t.Errorf("%s: %s points outside the repository", page, m[0])
		}
	}
}
