package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nomadq/nomadq/structs"
)

// TestDocs_ReadmeNamesEveryQueueOrder fails when website/README.md, the
// docs index, leaves out an order the server accepts: the orders are read
// from the server's own refusal of an unknown one.
func TestDocs_ReadmeNamesEveryQueueOrder(t *testing.T) {
	cfg := structs.BatchQueueConfig{Order: "no-such-order", ConcurrentPlacements: 1}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "must be") {
		t.Fatalf("an unknown order was not refused with the allowed ones: %v", err)
	}
	_, allowed, _ := strings.Cut(err.Error(), "must be")
	allowed, _, _ = strings.Cut(allowed, "\n")
	orders := regexp.MustCompile(`"([a-z]+)"`).FindAllStringSubmatch(allowed, -1)
	if len(orders) < 2 {
		t.Fatalf("no orders in %q", err)
	}
	index, err := os.ReadFile(filepath.Join(repoRoot, "website", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orders {
		if !strings.Contains(string(index), "`"+o[1]+"`") {
			t.Errorf("website/README.md does not name the batch queue order `%s`", o[1])
		}
	}
}
