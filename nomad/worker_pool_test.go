package nomad

import (
	"runtime"
	"testing"

	"github.com/shoenig/test/must"
)

func TestSchedulerWorkerPoolArgs_Validate(t *testing.T) {
	cases := []struct {
		name string
		args SchedulerWorkerPoolArgs
		err  string
	}{
		{"defaults", SchedulerWorkerPoolArgs{NumSchedulers: 1, EnabledSchedulers: workerSchedulers}, ""},
		{"no workers", SchedulerWorkerPoolArgs{NumSchedulers: 0, EnabledSchedulers: []string{"_core"}}, ""},
		{"one per CPU", SchedulerWorkerPoolArgs{NumSchedulers: runtime.NumCPU(), EnabledSchedulers: []string{"_core", "system"}}, ""},
		{"negative", SchedulerWorkerPoolArgs{NumSchedulers: -1, EnabledSchedulers: []string{"_core"}}, "num_schedulers -1 is out of range"},
		{"more than CPUs", SchedulerWorkerPoolArgs{NumSchedulers: runtime.NumCPU() + 1, EnabledSchedulers: []string{"_core"}}, "out of range"},
		{"without _core", SchedulerWorkerPoolArgs{NumSchedulers: 1, EnabledSchedulers: []string{"batch"}}, `must include "_core"`},
		{"unknown scheduler", SchedulerWorkerPoolArgs{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "gpu"}}, `unknown scheduler "gpu"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.args.Validate()
			if tc.err == "" {
				must.NoError(t, err)
			} else {
				must.ErrorContains(t, err, tc.err)
			}
		})
	}
}
