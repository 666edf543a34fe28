package agent

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/ui"
	"github.com/nomadq/nomadq/structs"
)

// chromiumPath finds a Chromium to drive, or skips the test: the
// Makefile's test-deps installs Debian's chromium.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (make test-deps installs it): the web UI browser test needs one")
	return ""
}

// TestUI_Browser drives a real headless Chromium against a dev agent: the
// queue page shows the line, moves without a reload, a timed alloc counts
// down, and a job stopped in the UI is stopped in the API.
func TestUI_Browser(t *testing.T) {
	chrome := chromiumPath(t)
	a, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	base := a.HTTPAddr()
	shots := os.Getenv("NOMADQ_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	must.NoError(t, os.MkdirAll(shots, 0o755))

	// ui-first holds 60% of the node's memory until the test lets it
	// finish, so ui-second (60% too) waits placing and ui-third queues
	// behind it at position 1.
	gateFile := filepath.Join(t.TempDir(), "finish")
	mem := nodeMemory(t, c) * 6 / 10
	first := maxRunJob("ui-first", "batch", 5*time.Minute, "echo hello from ui-first; while [ ! -e "+gateFile+" ]; do sleep 0.2; done")
	first.TaskGroups[0].Tasks[0].Resources.MemoryMB = new(mem)
	qRegister(t, c, first)
	firstAlloc := allocOf(t, c, "ui-first", 20*time.Second)
	qRegister(t, c, rawJob("ui-second", 50, "600", mem))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		e := queueEntry(t, c, "ui-second")
		return e != nil && e.Status == structs.BatchQueueStatusPlacing
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	qRegister(t, c, rawJob("ui-third", 50, "600", 32))

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.Headless,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The first run starts the browser, which lives as long as ctx: it
	// has no timeout of its own; each step below has one.
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("chromium at %s cannot start: %v", chrome, err)
	}
	// Stopping a job asks for confirmation: the test says yes.
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		must.NoError(t, chromedp.Do(sctx, actions...))
	}
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(sctx, a)
		must.NoError(t, err)
		return v
	}
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		must.NoError(t, err)
		must.NoError(t, os.WriteFile(filepath.Join(shots, name), buf, 0o644))
	}

	// The timed alloc counts down on the page, from the server's deadline.
	step(chromedp.Navigate(base+"/ui/allocations/"+firstAlloc.ID),
		chromedp.WaitVisible(chromedp.ID("alloc-countdown")),
		chromedp.Sleep(1100*time.Millisecond))
	before := get(chromedp.Text(chromedp.ID("alloc-countdown")))
	step(chromedp.Sleep(2100 * time.Millisecond))
	after := get(chromedp.Text(chromedp.ID("alloc-countdown")))
	shot("alloc.png")
	// Its stdout, streamed through the agent.
	step(chromedp.Click(chromedp.CSS(`.logs button[data-log="stdout"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("pre.log").textContent.includes("hello from ui-first")`, chromedp.WithPollingTimeout(20*time.Second)))
	b, aft := seconds(t, before), seconds(t, after)
	must.Less(t, b, aft, must.Sprintf("countdown went from %q to %q", before, after))
	must.Greater(t, 4*60, aft, must.Sprintf("countdown %q: the deadline is 5m after the alloc was created", after))

	step(chromedp.Navigate(base+"/ui/jobs"), chromedp.WaitVisible(chromedp.ID("jobs")))
	jobsText := get(chromedp.Text(chromedp.ID("jobs")))
	shot("jobs.png")
	for _, id := range []string{"ui-first", "ui-second", "ui-third"} {
		must.StrContains(t, jobsText, id)
	}
	must.StrContains(t, jobsText, "queued at 1")

	// The queue page: who waits, where, and who is placing.
	step(chromedp.Navigate(base+"/ui/queue"), chromedp.WaitVisible(chromedp.ID("queue-line")))
	pos := get(chromedp.Text(chromedp.CSS(`#queue-line tr[data-job="ui-third"] td.pos`)))
	placing := get(chromedp.Text(chromedp.ID("queue-placing")))
	step(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`window.__notReloaded = true`)(ctx, tg)
		return err
	}))
	shot("queue.png")
	must.Eq(t, "1", strings.TrimSpace(pos))
	must.StrContains(t, placing, "ui-second")

	// Hold and release ui-third from the line; the page redraws itself.
	for _, op := range []struct{ name, reason string }{{"hold", "Held"}, {"release", "Line"}} {
		step(chromedp.Click(chromedp.CSS(`#queue-line tr[data-job="ui-third"] button[data-op="`+op.name+`"]`)),
			chromedp.Poll[chromedp.Void](`document.getElementById("flash").textContent === "`+op.name+`: ui-third"`, chromedp.WithPollingTimeout(20*time.Second)))
		e := queueEntry(t, c, "ui-third")
		must.NotNil(t, e)
		must.Eq(t, op.reason, e.Reason)
		step(chromedp.Poll[chromedp.Void](`document.querySelector('#queue-line tr[data-job="ui-third"] td[data-reason="`+op.reason+`"]') !== null`, chromedp.WithPollingTimeout(20*time.Second)))
	}

	// ui-first finishes: ui-second places, ui-third is released, and the
	// page shows it without a reload.
	must.NoError(t, os.WriteFile(gateFile, nil, 0o644))
	pctx, pcancel := context.WithTimeout(ctx, 60*time.Second)
	defer pcancel()
	_, err := chromedp.Run(pctx, chromedp.Poll[bool](`document.querySelectorAll('#queue-line tr[data-job="ui-third"]').length === 0`,
		chromedp.WithPollingTimeout(55*time.Second)))
	must.NoError(t, err, must.Sprint("the queue page still shows ui-third waiting"))
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__notReloaded === true`))
	must.NoError(t, err)
	must.True(t, same, must.Sprint("the queue page was reloaded instead of updated"))
	done, _, err := c.Jobs().Info("ui-first", nil)
	must.NoError(t, err)
	must.Eq(t, "dead", *done.Status)

	// The timeline draws each batch alloc of the last hour as a bar, the
	// timed ones with their deadline.
	step(chromedp.Navigate(base+"/ui/timeline"), chromedp.WaitVisible(chromedp.ID("timeline")))
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#timeline g.bar').length`))
	must.NoError(t, err)
	must.GreaterEq(t, 3, bars)
	timeline, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('timeline').textContent`))
	must.NoError(t, err)
	must.StrContains(t, timeline, "ui-first/g")
	shot("timeline.png")

	// Stop a job with the UI's button; the API agrees.
	step(chromedp.Navigate(base+"/ui/jobs/ui-third"),
		chromedp.Click(chromedp.CSS(`button[data-action="stop-job"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("flash").textContent !== ""`, chromedp.WithPollingTimeout(20*time.Second)))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		j, _, err := c.Jobs().Info("ui-third", nil)
		return err == nil && j.Stop != nil && *j.Stop
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	// The job page follows its allocations: it shows the job dead once
	// the client has stopped them, without a reload.
	step(chromedp.Poll[chromedp.Void](`document.getElementById("job-status").textContent === "dead"`, chromedp.WithPollingTimeout(30*time.Second)))

	// Drain the node from its page, and stop draining.
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	for _, enable := range []string{"true", "false"} {
		step(chromedp.Navigate(base+"/ui/clients/"+nodes[0].ID),
			chromedp.Click(chromedp.CSS(`button[data-action="drain"][data-enable="`+enable+`"]`)),
			chromedp.Poll[chromedp.Void](`document.getElementById("flash").textContent === "Drain updated"`, chromedp.WithPollingTimeout(20*time.Second)))
		n, _, err := c.Nodes().Info(nodes[0].ID, nil)
		must.NoError(t, err)
		must.Eq(t, enable == "true", n.DrainStrategy != nil)
	}

	// The queue settings change from the page, as set-config would.
	step(chromedp.Navigate(base+"/ui/queue"),
		chromedp.SetValue(chromedp.ID("qc-slots"), "3"),
		chromedp.SetValue(chromedp.ID("qc-timeout"), "90s"),
		chromedp.Click(chromedp.CSS(`#queue-config button[type="submit"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("flash").textContent === "Queue settings applied."`, chromedp.WithPollingTimeout(20*time.Second)))
	sc, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	var raw struct {
		SchedulerConfig struct {
			BatchQueue structs.BatchQueueConfig
		}
	}
	_, err = c.Raw().Query("/v1/operator/scheduler/configuration", &raw, nil)
	must.NoError(t, err)
	must.Eq(t, 3, raw.SchedulerConfig.BatchQueue.ConcurrentPlacements)
	must.Eq(t, 90*time.Second, raw.SchedulerConfig.BatchQueue.WorkloadTimeout)
	must.Eq(t, "fifo", raw.SchedulerConfig.BatchQueue.Order)
	must.Eq(t, "binpack", sc.SchedulerConfig.SchedulerAlgorithm)

	// `nomad ui -authenticate`: a one-time token in the URL is exchanged
	// for the caller's token, kept in session storage, and leaves the
	// address bar; the pages then read with it.
	acl, ac, root := aclAgent(t)
	qRegister(t, ac, rawJob("ui-secret", 50, "60", 32))
	ott, _, err := ac.ACLTokens().UpsertOneTimeToken(nil)
	must.NoError(t, err)
	step(chromedp.Navigate(acl.HTTPAddr()+"/ui/jobs?ott="+url.QueryEscape(ott.OneTimeSecretID)),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/jobs/ui-secret"]`)))
	stored, err := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("nomadq.token")`))
	must.NoError(t, err)
	must.Eq(t, root.SecretID, stored)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	must.NoError(t, err)
	must.StrNotContains(t, loc, "ott")

	// An unknown ID is a 404 page with a way back.
	step(chromedp.Navigate(base + "/ui/allocations/no-such-alloc"))
	heading := get(chromedp.Text(chromedp.CSS("main h1")))
	must.StrContains(t, heading, "404")
	back, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`main p a`), "href"))
	must.NoError(t, err)
	must.Eq(t, "/ui/jobs", back.Value)
}

var countdownRE = regexp.MustCompile(`^(?:(\d+)h)?(?:(\d+)m)?(\d+)s$`)

// seconds reads a countdown such as "4m58s".
func seconds(t *testing.T, s string) int {
	t.Helper()
	m := countdownRE.FindStringSubmatch(strings.TrimSpace(s))
	must.NotNil(t, m, must.Sprintf("countdown %q", s))
	total := 0
	for i, mult := range []int{3600, 60, 1} {
		if m[i+1] != "" {
			n, _ := strconv.Atoi(m[i+1])
			total += n * mult
		}
	}
	return total
}

// TestUI_ACL checks that the UI reads with the user's token, as the API
// does: without one a page answers 403 with a way to enter one, with the
// session cookie it shows what the token may read, and the cookie alone
// never acts on /v1.
func TestUI_ACL(t *testing.T) {
	a, c, root := aclAgent(t)
	c.SetSecretID(root.SecretID)
	qRegister(t, c, rawJob("ui-secret", 50, "60", 32))
	get := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, a.HTTPAddr()+path, nil)
		must.NoError(t, err)
		if token != "" {
			req.AddCookie(&http.Cookie{Name: ui.TokenCookie, Value: url.QueryEscape(token)})
		}
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, body := get("/ui/jobs", "")
	must.Eq(t, http.StatusForbidden, code)
	must.StrContains(t, body, `href="/ui/settings/tokens"`)
	must.StrNotContains(t, body, "ui-secret")

	code, body = get("/ui/jobs", root.SecretID)
	must.Eq(t, http.StatusOK, code)
	must.StrContains(t, body, `href="/ui/jobs/ui-secret"`)

	code, _ = get("/ui/jobs/ui-secret", "not-a-token")
	must.Eq(t, http.StatusForbidden, code)

	// Unknown IDs answer the 404 page with a link back, never a blank
	// page or the API's text.
	for _, path := range []string{"/ui/jobs/nope", "/ui/jobs/ui-secret@other", "/ui/allocations/nope", "/ui/clients/nope", "/ui/nowhere"} {
		code, body = get(path, root.SecretID)
		must.Eq(t, http.StatusNotFound, code, must.Sprint(path))
		must.StrContains(t, body, `<a href="/ui/jobs">Back to jobs</a>`, must.Sprint(path))
	}

	// The cookie is for the pages' reads: the API takes the token only
	// from its headers, so a cross-site form cannot stop a job with it.
	req, err := http.NewRequest(http.MethodDelete, a.HTTPAddr()+"/v1/job/ui-secret", nil)
	must.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: ui.TokenCookie, Value: url.QueryEscape(root.SecretID)})
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusForbidden, resp.StatusCode)
}

// TestUI_JobPageReasons checks that the job page puts the scheduler's
// placement failure in words, as `nomad eval status` does.
func TestUI_JobPageReasons(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	job := rawJob("ui-nowhere", 50, "1", 32)
	job.Constrain(api.NewConstraint("${attr.kernel.name}", "=", "plan9"))
	qRegister(t, c, job)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		evals, _, err := c.Jobs().Evaluations("ui-nowhere", nil)
		return err == nil && len(evals) > 0 && len(evals[0].FailedTGAllocs) > 0
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	resp, err := http.Get(a.HTTPAddr() + "/ui/jobs/ui-nowhere")
	must.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	page := html.UnescapeString(string(body))
	must.StrContains(t, page, `group "g": 1 of 1 nodes evaluated were filtered out; constraint "${attr.kernel.name} = plan9": 1 nodes excluded by filter`)
}

// TestUI_AllocTimeout checks that an allocation ended by its
// max_run_duration says so on its page.
func TestUI_AllocTimeout(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	qRegister(t, c, maxRunJob("ui-timed", "batch", 2*time.Second, "sleep 60"))
	stub := allocOf(t, c, "ui-timed", 20*time.Second)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		al, _, err := c.Allocations().Info(stub.ID, nil)
		return err == nil && (al.ClientStatus == "complete" || al.ClientStatus == "failed")
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
	resp, err := http.Get(a.HTTPAddr() + "/ui/allocations/" + stub.ID)
	must.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, string(body), "allocation exceeded max_run_duration")
	// A finished alloc has no countdown left.
	must.StrNotContains(t, string(body), `id="alloc-countdown"`)
}
