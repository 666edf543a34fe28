package scheduler

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nomadq/nomadq/structs"
)

// Metric keys for the filters that are not user constraints.
const (
	filterNodePool   = "node pool"
	filterDatacenter = "datacenter"
	filterDrivers    = "missing drivers"
	// filterHostVolumes is Nomad's key for nodes without a group's host
	// volumes.
	filterHostVolumes = "missing compatible host volumes"
)

// rejection says why a node failed a check: key is the metric key
// (ConstraintFiltered), detail the phrase used in an infeasibility reason.
type rejection struct {
	key    string
	detail string
}

// checker is one static feasibility test: it looks at a node alone,
// never at what runs there.
type checker interface {
	check(ctx *evalContext, n *structs.Node) (bool, rejection)
	// classSafe reports whether the outcome depends only on the node's
	// computed class, so that it may be cached per class.
	classSafe() bool
}

// poolChecker keeps nodes of the job's node pool ("all" matches any).
type poolChecker struct{ pool string }

func (c poolChecker) classSafe() bool { return false }
func (c poolChecker) check(_ *evalContext, n *structs.Node) (bool, rejection) {
	pool := n.NodePool
	if pool == "" {
		pool = structs.DefaultNodePool
	}
	if c.matches(pool) {
		return true, rejection{}
	}
	return false, rejection{filterNodePool, "node pool"}
}

func (c poolChecker) matches(pool string) bool {
	return c.pool == structs.AllNodePools || pool == c.pool
}

// datacenterChecker keeps nodes whose datacenter matches one of the job's
// datacenter patterns (globs such as "*" or "dc*").
type datacenterChecker struct{ patterns []string }

func (c datacenterChecker) classSafe() bool { return false }
func (c datacenterChecker) check(_ *evalContext, n *structs.Node) (bool, rejection) {
	if c.matches(n.Datacenter) {
		return true, rejection{}
	}
	return false, rejection{filterDatacenter, "datacenter"}
}

func (c datacenterChecker) matches(dc string) bool {
	if len(c.patterns) == 0 {
		return true
	}
	for _, p := range c.patterns {
		if p == dc || p == "*" {
			return true
		}
		if strings.ContainsAny(p, "*?[") {
			if ok, err := path.Match(p, dc); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// driverChecker keeps nodes where every driver the group uses is detected
// and healthy.
type driverChecker struct{ drivers []string }

func (c driverChecker) classSafe() bool { return true }
func (c driverChecker) check(_ *evalContext, n *structs.Node) (bool, rejection) {
	for _, d := range c.drivers {
		if info, ok := n.Drivers[d]; ok && info != nil {
			if info.Detected && info.Healthy {
				continue
			}
			if info.Detected {
				return false, rejection{filterDrivers, `driver "` + d + `" unhealthy`}
			}
			return false, rejection{filterDrivers, `driver "` + d + `" missing`}
		}
		// Older fingerprints only publish an attribute.
		if v, ok := n.Attributes["driver."+d]; ok {
			if b, err := strconv.ParseBool(v); err == nil && b {
				continue
			}
		}
		return false, rejection{filterDrivers, `driver "` + d + `" missing`}
	}
	return true, rejection{}
}

// constraintChecker evaluates one static constraint.
type constraintChecker struct {
	c      *structs.Constraint
	key    string
	unique bool
}

func newConstraintChecker(c *structs.Constraint) constraintChecker {
	return constraintChecker{c: c, key: c.String(), unique: referencesUnique(c.LTarget) || referencesUnique(c.RTarget)}
}

func (c constraintChecker) classSafe() bool { return !c.unique }
func (c constraintChecker) check(ctx *evalContext, n *structs.Node) (bool, rejection) {
	if checkConstraint(ctx, c.c, n) {
		return true, rejection{}
	}
	return false, rejection{c.key, `constraint "` + c.key + `"`}
}

// isDynamic reports whether a constraint depends on where the job's other
// allocations are, and so is checked per placement rather than per node.
func isDynamic(c *structs.Constraint) bool {
	return c.Operand == structs.ConstraintDistinctHosts || c.Operand == structs.ConstraintDistinctProperty
}

// referencesUnique reports whether a target names a per-node value, which
// makes results impossible to share between nodes of one computed class.
func referencesUnique(target string) bool {
	return strings.HasPrefix(target, "${node.unique.") ||
		strings.HasPrefix(target, "${attr.unique.") ||
		strings.HasPrefix(target, "${meta.unique.")
}

// resolveTarget interpolates a constraint target against a node. Anything
// not of the form ${...} is a literal.
func resolveTarget(target string, n *structs.Node) (string, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return target, true
	}
	switch target {
	case "${node.unique.id}":
		return n.ID, true
	case "${node.unique.name}":
		return n.Name, true
	case "${node.datacenter}":
		return n.Datacenter, true
	case "${node.class}":
		return n.NodeClass, true
	case "${node.pool}":
		if n.NodePool == "" {
			return structs.DefaultNodePool, true
		}
		return n.NodePool, true
	}
	inner := target[2 : len(target)-1]
	if k, ok := strings.CutPrefix(inner, "attr."); ok {
		v, found := n.Attributes[k]
		return v, found
	}
	if k, ok := strings.CutPrefix(inner, "meta."); ok {
		v, found := n.Meta[k]
		return v, found
	}
	return "", false
}

// checkConstraint evaluates a static constraint against a node.
func checkConstraint(ctx *evalContext, c *structs.Constraint, n *structs.Node) bool {
	l, lok := resolveTarget(c.LTarget, n)
	r, rok := resolveTarget(c.RTarget, n)
	return checkOperand(ctx, c.Operand, l, lok, r, rok)
}

// checkOperand applies an operator to resolved targets.
func checkOperand(ctx *evalContext, op, l string, lok bool, r string, rok bool) bool {
	switch op {
	case "=", "==", "is":
		return lok && rok && l == r
	case "!=", "not":
		return !(lok && rok && l == r) && (lok || rok)
	case "<", "<=", ">", ">=":
		return lok && rok && checkOrder(op, l, r)
	case structs.ConstraintRegex:
		if !lok || !rok {
			return false
		}
		re := ctx.regexp(r)
		return re != nil && re.MatchString(l)
	case structs.ConstraintVersion, structs.ConstraintSemver:
		if !lok || !rok {
			return false
		}
		vc := ctx.versionConstraint(r, op == structs.ConstraintSemver)
		if vc == nil {
			return false
		}
		v := ctx.version(l)
		return v != nil && vc.Check(v)
	case structs.ConstraintSetContains, structs.ConstraintSetContainsAll:
		if !lok || !rok {
			return false
		}
		have := splitSet(l)
		for _, want := range strings.Split(r, ",") {
			if _, ok := have[strings.TrimSpace(want)]; !ok {
				return false
			}
		}
		return true
	case structs.ConstraintSetContainsAny:
		if !lok || !rok {
			return false
		}
		have := splitSet(l)
		for _, want := range strings.Split(r, ",") {
			if _, ok := have[strings.TrimSpace(want)]; ok {
				return true
			}
		}
		return false
	case structs.ConstraintAttributeIsSet:
		return lok
	case structs.ConstraintAttributeIsNotSet:
		return !lok
	}
	return false
}

func splitSet(s string) map[string]struct{} {
	parts := strings.Split(s, ",")
	m := make(map[string]struct{}, len(parts))
	for _, p := range parts {
		m[strings.TrimSpace(p)] = struct{}{}
	}
	return m
}

// checkOrder compares numerically when both sides are numbers, and
// lexically otherwise.
func checkOrder(op, l, r string) bool {
	var cmp int
	lf, lerr := strconv.ParseFloat(l, 64)
	rf, rerr := strconv.ParseFloat(r, 64)
	if lerr == nil && rerr == nil {
		switch {
		case lf < rf:
			cmp = -1
		case lf > rf:
			cmp = 1
		}
	} else {
		cmp = strings.Compare(l, r)
	}
	switch op {
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}

// compileRegexp is cached per evaluation by evalContext.regexp.
func compileRegexp(s string) *regexp.Regexp {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil
	}
	return re
}

// feasibilityIterator yields the nodes of its source that pass every
// static check, recording why the others were filtered. Results of
// class-safe checks are cached per computed class.
type feasibilityIterator struct {
	ctx      *evalContext
	source   nodeIterator
	pre      []checker // cheap checks that are never cached
	classed  []checker // cached per computed class
	unique   []checker // evaluated for every node
	classRes map[string]classResult
	stats    *filterStats
	pool     poolChecker
	dcs      datacenterChecker
}

// inPool counts the ready nodes in the job's node pool and datacenters
// from counts by pool and datacenter (see structs.CountReadyNodes): the
// nodes the static checks would count as in the pool had they all been
// visited.
func (it *feasibilityIterator) inPool(ready map[string]map[string]int) int {
	n := 0
	for pool, byDC := range ready {
		if !it.pool.matches(pool) {
			continue
		}
		for dc, c := range byDC {
			if it.dcs.matches(dc) {
				n += c
			}
		}
	}
	return n
}

type classResult struct {
	ok  bool
	rej rejection
}

// filterStats is what the static filtering of one group learned: the
// metric shape Nomad reports, and what the verdict needs.
type filterStats struct {
	metric   structs.AllocMetric
	notReady int
	// passedLocation counts nodes that passed the node pool and
	// datacenter filters.
	passedLocation int
	// details counts rejections by reason phrase, in first-seen order.
	details     map[string]int
	detailOrder []string
	classElig   map[string]bool
	escaped     bool
}

func newFeasibilityIterator(ctx *evalContext, source nodeIterator, job *structs.Job, tg *structs.TaskGroup) *feasibilityIterator {
	it := &feasibilityIterator{
		ctx:      ctx,
		source:   source,
		classRes: make(map[string]classResult),
		stats: &filterStats{
			details:   make(map[string]int),
			classElig: make(map[string]bool),
		},
	}
	pool := job.NodePool
	if pool == "" {
		pool = structs.DefaultNodePool
	}
	it.stats.metric.NodePool = pool
	it.pool, it.dcs = poolChecker{pool}, datacenterChecker{job.Datacenters}
	it.pre = []checker{it.pool, it.dcs}

	var drivers []string
	for _, t := range tg.Tasks {
		if t.Driver != "" && !slices.Contains(drivers, t.Driver) {
			drivers = append(drivers, t.Driver)
		}
	}
	if len(drivers) > 0 {
		it.classed = append(it.classed, driverChecker{drivers})
	}
	if len(tg.Volumes) > 0 {
		it.classed = append(it.classed, newHostVolumeChecker(tg.Volumes))
	}
	if nc, ok := newNetworkChecker(tg); ok {
		// Not in the computed class: a blocked eval must wake on any
		// node change.
		it.unique = append(it.unique, nc)
		it.stats.escaped = true
	}
	add := func(cs []*structs.Constraint) {
		for _, c := range cs {
			if c == nil || isDynamic(c) {
				continue
			}
			cc := newConstraintChecker(c)
			if cc.unique {
				it.unique = append(it.unique, cc)
				it.stats.escaped = true
			} else {
				it.classed = append(it.classed, cc)
			}
		}
	}
	add(job.Constraints)
	add(tg.Constraints)
	for _, t := range tg.Tasks {
		add(t.Constraints)
	}
	return it
}

// Next returns the next feasible node, or nil at the end of the source.
func (it *feasibilityIterator) Next() *structs.Node {
	for {
		n := it.source.Next()
		if n == nil {
			return nil
		}
		if !n.Ready() {
			it.stats.notReady++
			continue
		}
		m := &it.stats.metric
		m.NodesEvaluated++
		if ok, rej := it.runPre(n); !ok {
			it.filter(n, rej)
			continue
		}
		m.NodesInPool++
		if m.NodesAvailable == nil {
			m.NodesAvailable = make(map[string]int)
		}
		m.NodesAvailable[n.Datacenter]++
		it.stats.passedLocation++
		if ok, rej := it.runClassed(n); !ok {
			it.filter(n, rej)
			continue
		}
		if ok, rej := it.runUnique(n); !ok {
			it.filter(n, rej)
			continue
		}
		return n
	}
}

func (it *feasibilityIterator) runPre(n *structs.Node) (bool, rejection) {
	for _, c := range it.pre {
		if ok, rej := c.check(it.ctx, n); !ok {
			return false, rej
		}
	}
	return true, rejection{}
}

func (it *feasibilityIterator) runClassed(n *structs.Node) (bool, rejection) {
	class := n.ComputedClass
	if class != "" {
		if r, ok := it.classRes[class]; ok {
			return r.ok, r.rej
		}
	}
	res := classResult{ok: true}
	for _, c := range it.classed {
		if ok, rej := c.check(it.ctx, n); !ok {
			res = classResult{false, rej}
			break
		}
	}
	if class != "" {
		it.classRes[class] = res
		it.stats.classElig[class] = res.ok
	}
	return res.ok, res.rej
}

func (it *feasibilityIterator) runUnique(n *structs.Node) (bool, rejection) {
	for _, c := range it.unique {
		if ok, rej := c.check(it.ctx, n); !ok {
			return false, rej
		}
	}
	return true, rejection{}
}

func (it *feasibilityIterator) filter(n *structs.Node, rej rejection) {
	m := &it.stats.metric
	m.NodesFiltered++
	if m.ConstraintFiltered == nil {
		m.ConstraintFiltered = make(map[string]int)
	}
	m.ConstraintFiltered[rej.key]++
	if n.ComputedClass != "" {
		if m.ClassFiltered == nil {
			m.ClassFiltered = make(map[string]int)
		}
		m.ClassFiltered[n.ComputedClass]++
	}
	if _, seen := it.stats.details[rej.detail]; !seen {
		it.stats.detailOrder = append(it.stats.detailOrder, rej.detail)
	}
	it.stats.details[rej.detail]++
}
