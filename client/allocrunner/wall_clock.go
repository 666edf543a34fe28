package allocrunner

import "time"

// wallNow is the wall clock the max_run_duration hook compares deadlines
// with. Builds with the e2etest tag can step it (wall_clock_e2etest.go),
// so end-to-end tests can move a client's clock without moving the
// machine's.
var wallNow = time.Now
