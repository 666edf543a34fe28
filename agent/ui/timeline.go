package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The timeline is drawn by the server as SVG: the last hour, the counts
// of queued, placing and running work over it, and each batch alloc as a
// bar from its creation to its end, with its max_run_duration deadline.
const (
	tlWindow   = time.Hour
	tlLeft     = 170.0 // room for the row labels
	tlWidth    = 1000.0
	tlChartH   = 120.0
	tlRowH     = 16.0
	tlMaxRows  = 60
	tlMaxJobs  = 100
	tlSamples  = 120
	tlAxisTick = 10 * time.Minute
)

// tlBar is one alloc's row.
type tlBar struct {
	Label              string
	Href               string
	Y                  float64
	X1, X2             float64 // creation to end (or now)
	DeadlineX          float64 // 0 without max_run_duration
	DeadlineOff        bool    // the deadline is past the right edge
	Status, Title      string
	TimedOut, Terminal bool
}

// tlSeries is one count over time, as an SVG polyline.
type tlSeries struct {
	Name, Color, Points string
	Max, Now            int
}

// tlTick is a label of the time axis.
type tlTick struct {
	X     float64
	Label string
}

func (s *Server) timelinePage(w http.ResponseWriter, r *http.Request) {
	jobID := r.URL.Query().Get("job")
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = "*"
		if jobID != "" {
			ns = "default"
		}
	}
	now := time.Now()
	from := now.Add(-tlWindow)
	var allocs []*api.AllocationListStub
	path := "/v1/allocations?namespace=" + url.QueryEscape(ns)
	if jobID != "" {
		path = "/v1/job/" + url.PathEscape(jobID) + "/allocations?all=true&namespace=" + url.QueryEscape(ns)
	}
	if err := s.get(r, path, &allocs); err != nil {
		s.fail(w, r, "Timeline", err)
		return
	}
	var entries []*queueEntry
	qpath := "/v1/queue/jobs"
	if jobID != "" {
		qpath += "?job_id=" + url.QueryEscape(jobID) + "&namespace=" + url.QueryEscape(ns)
	}
	if err := s.get(r, qpath, &entries); err != nil {
		s.fail(w, r, "Timeline", err)
		return
	}

	x := func(t int64) float64 {
		f := float64(t-from.UnixNano()) / float64(tlWindow)
		return tlLeft + min(max(f, 0), 1)*(tlWidth-tlLeft)
	}
	end := func(a *api.AllocationListStub) int64 {
		if terminal(a.ClientStatus) {
			return a.ModifyTime
		}
		return now.UnixNano()
	}
	// The batch allocs that overlap the window, newest first.
	var shown []*api.AllocationListStub
	for _, a := range allocs {
		if a.JobType != "batch" && a.JobType != "sysbatch" {
			continue
		}
		if end(a) < from.UnixNano() {
			continue
		}
		shown = append(shown, a)
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].CreateTime > shown[j].CreateTime })
	truncated := len(shown) > tlMaxRows
	if truncated {
		shown = shown[:tlMaxRows]
	}
	// Deadlines need the groups' max_run_duration: read each job once.
	limits := map[string]map[string]time.Duration{}
	for _, a := range shown {
		key := a.Namespace + "\x00" + a.JobID
		if _, ok := limits[key]; ok || len(limits) >= tlMaxJobs {
			continue
		}
		limits[key] = map[string]time.Duration{}
		var job api.Job
		if err := s.get(r, "/v1/job/"+url.PathEscape(a.JobID)+"?namespace="+url.QueryEscape(a.Namespace), &job); err != nil {
			continue
		}
		for _, tg := range job.TaskGroups {
			if tg.Name != nil && tg.MaxRunDuration != nil {
				limits[key][*tg.Name] = *tg.MaxRunDuration
			}
		}
	}
	top := tlChartH + 40
	bars := make([]tlBar, 0, len(shown))
	for i, a := range shown {
		b := tlBar{
			Label: a.JobID + "/" + a.TaskGroup + " " + a.ID[:8], Href: "/ui/allocations/" + a.ID,
			Y: top + float64(i)*tlRowH, X1: x(a.CreateTime), X2: x(end(a)),
			Status: a.ClientStatus, Terminal: terminal(a.ClientStatus),
			TimedOut: strings.Contains(a.ClientDescription, "max_run_duration"),
		}
		b.X2 = max(b.X2, b.X1+2)
		b.Title = fmt.Sprintf("%s: %s, created %s", b.Label, a.ClientStatus, time.Unix(0, a.CreateTime).UTC().Format(time.TimeOnly))
		if d, ok := limits[a.Namespace+"\x00"+a.JobID][a.TaskGroup]; ok {
			deadline := a.CreateTime + int64(d)
			b.DeadlineX = x(deadline)
			b.DeadlineOff = deadline > now.UnixNano()
			b.Title += ", max_run_duration deadline " + time.Unix(0, deadline).UTC().Format(time.TimeOnly)
		}
		bars = append(bars, b)
	}

	// Counts over time: running from the allocs, queued and placing from
	// the entries the queue holds now (entries that left it are gone).
	count := func(at int64) (queued, placing, running int) {
		for _, e := range entries {
			switch {
			case e.EnqueueTime > at:
			case e.ReleaseTime == 0 || e.ReleaseTime > at:
				queued++
			default:
				placing++
			}
		}
		for _, a := range allocs {
			live := !terminal(a.ClientStatus)
			if a.CreateTime <= at && (live || a.ModifyTime > at) && (a.JobType == "batch" || a.JobType == "sysbatch") {
				running++
			}
		}
		return
	}
	type sample struct{ q, p, r int }
	samples := make([]sample, tlSamples+1)
	peak := 1
	for i := range samples {
		at := from.UnixNano() + int64(i)*int64(tlWindow)/tlSamples
		q, p, rn := count(at)
		samples[i] = sample{q, p, rn}
		peak = max(peak, q, p, rn)
	}
	series := []tlSeries{{Name: "queued", Color: "#c80"}, {Name: "placing", Color: "#26c"}, {Name: "running", Color: "#2a7"}}
	for si := range series {
		var pts strings.Builder
		for i, smp := range samples {
			v := [3]int{smp.q, smp.p, smp.r}[si]
			px := tlLeft + float64(i)/tlSamples*(tlWidth-tlLeft)
			py := 20 + tlChartH - float64(v)/float64(peak)*tlChartH
			fmt.Fprintf(&pts, "%.1f,%.1f ", px, py)
			series[si].Max = max(series[si].Max, v)
			series[si].Now = v
		}
		series[si].Points = pts.String()
	}
	var ticks []tlTick
	for t := from.Truncate(tlAxisTick).Add(tlAxisTick); t.Before(now); t = t.Add(tlAxisTick) {
		ticks = append(ticks, tlTick{X: x(t.UnixNano()), Label: t.UTC().Format("15:04")})
	}
	title := "Timeline"
	if jobID != "" {
		title = "Timeline of " + jobID
	}
	s.render(w, r, http.StatusOK, "timeline", title, map[string]any{
		"Job": jobID, "Namespace": ns, "Bars": bars, "Series": series, "Ticks": ticks, "Peak": peak,
		"Height": top + float64(len(bars))*tlRowH + 10, "Width": tlWidth, "Left": tlLeft,
		"ChartBottom": 20 + tlChartH, "Truncated": truncated, "From": from.UTC().Format("15:04"), "To": now.UTC().Format("15:04 UTC"),
	})
}
