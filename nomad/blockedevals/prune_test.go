package blockedevals

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"
)

// TestBlockedEvals_PrunesOldUnblockIndexes: the unblock indexes of
// classes and nodes not seen for unblockIndexTTL are forgotten, so a
// leader that saw 10,000 nodes come and go in a term does not hold them
// all; recent ones are kept and still catch an eval that missed them.
func TestBlockedEvals_PrunesOldUnblockIndexes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, enq := testBlockedEvals(t)
		for i := range 10_000 {
			b.Unblock(fmt.Sprintf("class-%d", i), uint64(i+1))
			b.UnblockNode(fmt.Sprintf("node-%d", i), uint64(i+1))
		}
		must.MapLen(t, 10_000, b.classIndex)
		must.MapLen(t, 10_000, b.nodeIndex)

		// Within the TTL nothing is forgotten.
		time.Sleep(unblockIndexTTL - time.Minute)
		b.Unblock("recent", 20_000)
		must.MapLen(t, 10_001, b.classIndex)

		time.Sleep(unblockPruneEvery + 2*time.Minute)
		b.UnblockNode("node-recent", 20_001)
		must.MapLen(t, 1, b.classIndex)
		must.MapLen(t, 1, b.nodeIndex)

		// The recent class unblock is still one an eval can have missed.
		eval := testBlockedEval("job", 10, 19_000, map[string]bool{"recent": true})
		b.Block(eval)
		must.Eq(t, []string{eval.ID}, enq.ids())
	})
}
