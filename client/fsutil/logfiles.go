package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Task log files are "<prefix>.<n>", the highest n the live one, as
// Nomad's log rotation names them; the drivers that write them and the
// log readers share these helpers.

// LatestLogIndex returns the highest index of the files "<prefix>.<n>",
// or 0 when there is none.
func LatestLogIndex(prefix string) int {
	matches, _ := filepath.Glob(prefix + ".*")
	best := 0
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimPrefix(m, prefix+"."))
		if err == nil && n > best {
			best = n
		}
	}
	return best
}

// PruneLogs removes the files of prefix older than the keep newest when
// the live one is live: "<prefix>.<live-keep>" and below, stopping at
// the first that is already gone.
func PruneLogs(prefix string, live, keep int) {
	for old := live - keep; old >= 0; old-- {
		if err := os.Remove(prefix + "." + strconv.Itoa(old)); err != nil {
			return
		}
	}
}
