package nomad

import (
	"fmt"
	"net/http"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// PeriodicForce launches a child of a periodic job now, whatever its
// schedule and prohibit_overlap say, as `nomad job periodic force` does.
// The launch also becomes the job's last launch, so the schedule resumes
// from it.
func (j *Job) PeriodicForce(args *structs.PeriodicForceRequest, reply *structs.PeriodicForceResponse) error {
	if done, err := j.srv.forward("Job.PeriodicForce", args.WriteRequest, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return fmt.Errorf("missing job ID for periodic force")
	}
	ns := namespaceOf(args.Namespace)
	job, err := j.lookup(ns, args.JobID)
	if err != nil {
		return err
	}
	if !job.IsPeriodic() {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "can't force launch non-periodic job %q", args.JobID)
	}
	if job.Stop {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "can't force launch stopped job %q", args.JobID)
	}
	now := time.Now()
	req := newPeriodicLaunch(job, now, now)
	index, err := raftPeriodicLauncher{j.srv}.LaunchPeriodic(req)
	if err != nil {
		return err
	}
	reply.EvalID = req.Eval.ID
	reply.EvalCreateIndex = index
	reply.Index = index
	return nil
}
