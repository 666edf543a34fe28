package ui

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// queueEntry is one row of GET /v1/queue/jobs.
type queueEntry struct {
	Position       int
	Namespace      string
	JobID          string
	EvalID         string
	Priority       int
	Status         string
	Reason         string
	ReasonDetail   string
	EnqueueTime    int64
	ReleaseTime    int64
	EstimatedStart int64
}

// Why is the entry's reason in words: the queue's detail, or its bare
// code when there is none.
func (e *queueEntry) Why() string {
	if e.ReasonDetail != "" {
		return e.ReasonDetail
	}
	return e.Reason
}

// queueStatus is the body of GET /v1/queue.
type queueStatus struct {
	Config struct {
		Enabled              bool
		Order                string
		ConcurrentPlacements int
		WorkloadTimeout      int64
		Backfill             bool
	}
	Depth   map[string]int
	Placing []*queueEntry
}

var funcs = template.FuncMap{
	"ago": func(v any) string {
		ns := nanos(v)
		if ns == 0 {
			return "-"
		}
		return time.Since(time.Unix(0, ns)).Truncate(time.Second).String()
	},
	"when": func(v any) string {
		ns := nanos(v)
		if ns == 0 {
			return "-"
		}
		return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"until": func(v any) string {
		ns := nanos(v)
		if ns == 0 {
			return "unknown"
		}
		d := time.Until(time.Unix(0, ns)).Truncate(time.Second)
		if d <= 0 {
			return "now"
		}
		return d.String()
	},
	"eta": func(v any) string {
		ns := nanos(v)
		switch d := time.Until(time.Unix(0, ns)).Truncate(time.Second); {
		case ns == 0:
			return "unknown"
		case d <= 0:
			return "now"
		default:
			return "in " + d.String()
		}
	},
	"ms":    func(ns int64) int64 { return ns / int64(time.Millisecond) },
	"nowms": func() int64 { return time.Now().UnixMilli() },
	"deref": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
	"derefb": func(p *bool) bool { return p != nil && *p },
	"dur":    func(d int64) string { return time.Duration(d).String() },
	"jobURL": func(id, ns string) string {
		u := "/ui/jobs/" + url.PathEscape(id)
		if ns != "" && ns != "default" {
			u += "@" + url.PathEscape(ns)
		}
		return u
	},
	"short": func(id string) string {
		if len(id) > 8 {
			return id[:8]
		}
		return id
	},
	"pathq":  url.PathEscape,
	"queryq": url.QueryEscape,
	"add":    func(a, b int) int { return a + b },
	"mul":    func(a, b int) int { return a * b },
	"addf":   func(a, b float64) float64 { return a + b },
	"subf":   func(a, b float64) float64 { return a - b },
	"pct":    func(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) },
}

// nanos reads a unix-nanosecond time given as int64 or *int64.
func nanos(v any) int64 {
	switch t := v.(type) {
	case int64:
		return t
	case *int64:
		if t != nil {
			return *t
		}
	}
	return 0
}

// jobRow is one line of the jobs page.
type jobRow struct {
	*api.JobListStub
	Queue *queueEntry
}

func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	prefix := r.URL.Query().Get("prefix")
	q := url.Values{"namespace": {"*"}}
	if ns != "" {
		q.Set("namespace", ns)
	}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	var jobs []*api.JobListStub
	if err := s.get(r, "/v1/jobs?"+q.Encode(), &jobs); err != nil {
		s.fail(w, r, "Jobs", err)
		return
	}
	queued := map[string]*queueEntry{}
	var entries []*queueEntry
	if err := s.get(r, "/v1/queue/jobs", &entries); err == nil {
		for _, e := range entries {
			queued[e.Namespace+"\x00"+e.JobID] = e
		}
	}
	rows := make([]jobRow, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, jobRow{j, queued[j.Namespace+"\x00"+j.ID]})
	}
	var nss []*api.Namespace
	_ = s.get(r, "/v1/namespaces", &nss)
	s.render(w, r, http.StatusOK, "jobs", "Jobs", map[string]any{
		"Jobs": rows, "Namespace": ns, "Prefix": prefix, "Namespaces": nss,
	})
}

// allocRow is an allocation with its max_run_duration deadline, when its
// group has one.
type allocRow struct {
	*api.AllocationListStub
	Deadline int64 // unix nanoseconds; 0 without max_run_duration
}

// splitJobID parses Nomad's job route, "<id>" or "<id>@<namespace>".
func splitJobID(raw string) (string, string) {
	if i := strings.LastIndex(raw, "@"); i > 0 {
		return raw[:i], raw[i+1:]
	}
	return raw, "default"
}

func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) {
	id, ns := splitJobID(r.PathValue("id"))
	base := "/v1/job/" + url.PathEscape(id)
	q := "?namespace=" + url.QueryEscape(ns)
	var job api.Job
	if err := s.get(r, base+q, &job); err != nil {
		s.fail(w, r, fmt.Sprintf("Job %q in namespace %q", id, ns), err)
		return
	}
	var allocs []*api.AllocationListStub
	var evals []*api.Evaluation
	var versions struct{ Versions []*api.Job }
	var entries []*queueEntry
	for _, read := range []struct {
		path string
		out  any
	}{
		{base + "/allocations" + q, &allocs},
		{base + "/evaluations" + q, &evals},
		{base + "/versions" + q, &versions},
		{"/v1/queue/jobs?job_id=" + url.QueryEscape(id) + "&namespace=" + url.QueryEscape(ns), &entries},
	} {
		if err := s.get(r, read.path, read.out); err != nil {
			s.fail(w, r, "Job "+id, err)
			return
		}
	}
	limits := map[string]time.Duration{}
	for _, tg := range job.TaskGroups {
		if tg.Name != nil && tg.MaxRunDuration != nil {
			limits[*tg.Name] = *tg.MaxRunDuration
		}
	}
	rows := make([]allocRow, 0, len(allocs))
	for _, a := range allocs {
		row := allocRow{AllocationListStub: a}
		if d, ok := limits[a.TaskGroup]; ok && !terminal(a.ClientStatus) {
			row.Deadline = a.CreateTime + int64(d)
		}
		rows = append(rows, row)
	}
	sort.Slice(evals, func(i, j int) bool { return evals[i].CreateIndex > evals[j].CreateIndex })
	var entry *queueEntry
	if len(entries) > 0 {
		entry = entries[0]
	}
	s.render(w, r, http.StatusOK, "job", "Job "+id, map[string]any{
		"Job": &job, "Allocs": rows, "Evals": evals, "Versions": versions.Versions,
		"Queue": entry, "Limits": limits, "Reasons": evalReasons(evals),
	})
}

func terminal(status string) bool {
	return status == "complete" || status == "failed" || status == "lost"
}

// evalReasons puts each evaluation's placement failures in words, as
// `nomad eval status` does.
func evalReasons(evals []*api.Evaluation) map[string][]string {
	out := map[string][]string{}
	for _, e := range evals {
		groups := make([]string, 0, len(e.FailedTGAllocs))
		for g := range e.FailedTGAllocs {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			m := e.FailedTGAllocs[g]
			line := fmt.Sprintf("group %q: %d of %d nodes evaluated were filtered out", g, m.NodesFiltered, m.NodesEvaluated)
			if m.NodesEvaluated == 0 {
				line = fmt.Sprintf("group %q: no nodes were eligible for evaluation", g)
			}
			for _, c := range sortedKeys(m.ConstraintFiltered) {
				line += fmt.Sprintf("; constraint %q: %d nodes excluded by filter", c, m.ConstraintFiltered[c])
			}
			for _, c := range sortedKeys(m.ClassFiltered) {
				line += fmt.Sprintf("; class %q: %d nodes excluded by filter", c, m.ClassFiltered[c])
			}
			for _, d := range sortedKeys(m.DimensionExhausted) {
				line += fmt.Sprintf("; resources exhausted: %s on %d nodes", d, m.DimensionExhausted[d])
			}
			for _, q := range m.QuotaExhausted {
				line += "; quota exhausted: " + q
			}
			out[e.ID] = append(out[e.ID], line)
		}
		if e.StatusDescription != "" && len(out[e.ID]) == 0 && e.Status != "complete" {
			out[e.ID] = append(out[e.ID], e.StatusDescription)
		}
	}
	return out
}

// sortedKeys returns m's keys in order, so a reason reads the same on
// every render.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// share is a namespace's part of the queue's placing and queued work
// against its fair-share weight.
type share struct {
	Namespace string
	Weight    float64
	Placing   int
	Queued    int
	Share     float64 // of all placing workloads
	Target    float64 // Weight over the sum of weights
}

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request) {
	var status queueStatus
	var entries []*queueEntry
	if err := s.get(r, "/v1/queue", &status); err != nil {
		s.fail(w, r, "Queue", err)
		return
	}
	if err := s.get(r, "/v1/queue/jobs", &entries); err != nil {
		s.fail(w, r, "Queue", err)
		return
	}
	// The line is what waits; the rest was released and carries the
	// queue's verdict (placing, stalled, constrained). A queued job
	// waiting for capacity holds a reservation, and the released jobs
	// that run ahead of it are the backfill: the reason codes say which.
	var line, placing, reserved, backfill []*queueEntry
	for _, e := range entries {
		if e.Status == "queued" {
			line = append(line, e)
			continue
		}
		placing = append(placing, e)
		switch e.Reason {
		case "Resources":
			reserved = append(reserved, e)
		case "Backfill":
			backfill = append(backfill, e)
		}
	}
	shares := map[string]*share{}
	var nss []*api.Namespace
	_ = s.get(r, "/v1/namespaces", &nss)
	for _, n := range nss {
		sh := &share{Namespace: n.Name, Weight: 1}
		if v, err := strconv.ParseFloat(n.Meta["batch_queue_weight"], 64); err == nil && v > 0 {
			sh.Weight = v
		}
		shares[n.Name] = sh
	}
	for _, e := range entries {
		sh := shares[e.Namespace]
		if sh == nil {
			sh = &share{Namespace: e.Namespace, Weight: 1}
			shares[e.Namespace] = sh
		}
		if e.Status != "queued" {
			sh.Placing++
		} else {
			sh.Queued++
		}
	}
	var list []*share
	var weights float64
	for _, sh := range shares {
		if sh.Placing+sh.Queued > 0 {
			list = append(list, sh)
			weights += sh.Weight
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Namespace < list[j].Namespace })
	for _, sh := range list {
		if n := len(placing); n > 0 {
			sh.Share = float64(sh.Placing) / float64(n)
		}
		sh.Target = sh.Weight / weights
	}
	s.render(w, r, http.StatusOK, "queue", "Queue", map[string]any{
		"Status": status, "Line": line, "Placing": placing, "Shares": list,
		"Reserved": reserved, "Backfill": backfill,
		"Orders": []string{"fifo", "priority", "fair", "multifactor"},
	})
}

func (s *Server) allocPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var alloc api.Allocation
	if err := s.get(r, "/v1/allocation/"+url.PathEscape(id), &alloc); err != nil {
		s.fail(w, r, fmt.Sprintf("Allocation %q", id), err)
		return
	}
	var deadline int64
	if alloc.Job != nil && !terminal(alloc.ClientStatus) {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil && tg.MaxRunDuration != nil {
			deadline = alloc.CreateTime + int64(*tg.MaxRunDuration)
		}
	}
	tasks := make([]string, 0, len(alloc.TaskStates))
	for name := range alloc.TaskStates {
		tasks = append(tasks, name)
	}
	sort.Strings(tasks)
	s.render(w, r, http.StatusOK, "alloc", "Allocation "+id, map[string]any{
		"Alloc": &alloc, "Deadline": deadline, "Tasks": tasks,
	})
}

func (s *Server) clientsPage(w http.ResponseWriter, r *http.Request) {
	var nodes []*api.NodeListStub
	if err := s.get(r, "/v1/nodes", &nodes); err != nil {
		s.fail(w, r, "Clients", err)
		return
	}
	s.render(w, r, http.StatusOK, "clients", "Clients", map[string]any{"Nodes": nodes})
}

func (s *Server) clientPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var node api.Node
	if err := s.get(r, "/v1/node/"+url.PathEscape(id), &node); err != nil {
		s.fail(w, r, fmt.Sprintf("Client %q", id), err)
		return
	}
	var allocs []*api.Allocation
	if err := s.get(r, "/v1/node/"+url.PathEscape(id)+"/allocations", &allocs); err != nil {
		s.fail(w, r, "Client "+id, err)
		return
	}
	s.render(w, r, http.StatusOK, "client", "Client "+node.Name, map[string]any{"Node": &node, "Allocs": allocs})
}

func (s *Server) serversPage(w http.ResponseWriter, r *http.Request) {
	var members api.ServerMembers
	if err := s.get(r, "/v1/agent/members", &members); err != nil {
		s.fail(w, r, "Servers", err)
		return
	}
	var leader string
	_ = s.get(r, "/v1/status/leader", &leader)
	s.render(w, r, http.StatusOK, "servers", "Servers", map[string]any{"Members": members.Members, "Leader": leader})
}

func (s *Server) tokensPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "tokens", "ACL token", nil)
}
