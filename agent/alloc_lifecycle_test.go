package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// lifecycleAgents starts a server-only agent and a separate client-only
// agent running raw_exec, and returns the server and an api client to it.
func lifecycleAgents(t *testing.T) (*Agent, *api.Client) {
	t.Helper()
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.DataDir = t.TempDir()
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
	})
	return srv, apiClient(t, srv)
}

// lifecycleScript writes a file, counts its starts, leaks a symlink to a
// host file and traps SIGUSR1.
const lifecycleScript = `echo written > out.txt; echo start >> starts.txt; ln -sf /etc/passwd leak;
trap 'echo got-usr1 > signal.txt' USR1
while true; do sleep 0.1; done`

// wsExec runs a command over the exec WebSocket of the agent at addr and
// returns stdout, stderr, the exit code, or the close reason as error.
func wsExec(t *testing.T, addr, allocID, task string, tty bool, stdin string, cmd ...string) (string, string, int, error) {
	t.Helper()
	raw, _ := json.Marshal(cmd)
	q := url.Values{"task": {task}, "command": {string(raw)}, "tty": {fmt.Sprint(tty)}}
	u := "ws" + strings.TrimPrefix(addr, "http") + "/v1/client/allocation/" + allocID + "/exec?" + q.Encode()
	conn, _, err := websocket.DefaultDialer.Dial(u, nil)
	must.NoError(t, err)
	defer conn.Close()
	if stdin != "" {
		must.NoError(t, conn.WriteJSON(map[string]any{"stdin": map[string]any{"data": []byte(stdin)}}))
	}
	must.NoError(t, conn.WriteJSON(map[string]any{"stdin": map[string]any{"close": true}}))
	var stdout, stderr bytes.Buffer
	for {
		var f struct {
			Stdout *struct{ Data []byte } `json:"stdout"`
			Stderr *struct{ Data []byte } `json:"stderr"`
			Exited bool                   `json:"exited"`
			Result *struct {
				ExitCode int `json:"exit_code"`
			} `json:"result"`
		}
		if err := conn.ReadJSON(&f); err != nil {
			return stdout.String(), stderr.String(), -1, err
		}
		switch {
		case f.Stdout != nil:
			stdout.Write(f.Stdout.Data)
		case f.Stderr != nil:
			stderr.Write(f.Stderr.Data)
		case f.Exited:
			return stdout.String(), stderr.String(), f.Result.ExitCode, nil
		}
	}
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	must.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, string(b)
}

// Every lifecycle operation is sent to the server agent while the alloc
// runs on a separate client agent, so each goes through forwarding.
func TestAllocLifecycle_ThroughServer(t *testing.T) {
	srv, c := lifecycleAgents(t)
	job := api.NewBatchJob("life", "life", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	tg.AddTask(shTask("main", lifecycleScript))
	job.AddTaskGroup(tg)
	register(t, c, job)
	alloc := onlyAlloc(t, c, "life", isRunning)
	base := srv.HTTPAddr()
	fsURL := func(op, path string) string {
		return base + "/v1/client/fs/" + op + "/" + alloc.ID + "?path=" + url.QueryEscape(path)
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		code, _ := httpGet(t, fsURL("stat", "/main/leak"))
		return code == http.StatusOK || code == http.StatusBadRequest
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))

	t.Run("exec", func(t *testing.T) {
		cases := []struct {
			name     string
			cmd      []string
			stdin    string
			tty      bool
			wantOut  string
			wantCode int
		}{
			{"echo", []string{"echo", "hi"}, "", false, "hi\n", 0},
			{"exit code", []string{"/bin/sh", "-c", "echo err >&2; exit 3"}, "", false, "", 3},
			{"task dir and env", []string{"/bin/sh", "-c", "cat out.txt; echo $NOMAD_TASK_NAME"}, "", false, "written\nmain\n", 0},
			{"stdin", []string{"cat"}, "from stdin", false, "from stdin", 0},
			{"tty", []string{"/bin/sh", "-c", "test -t 0 && echo on-a-tty"}, "", true, "on-a-tty\r\n", 0},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				out, _, code, err := wsExec(t, base, alloc.ID, "main", tc.tty, tc.stdin, tc.cmd...)
				must.NoError(t, err)
				must.Eq(t, tc.wantCode, code)
				must.Eq(t, tc.wantOut, out)
			})
		}
		_, _, _, err := wsExec(t, base, alloc.ID, "nope", false, "", "true")
		must.ErrorContains(t, err, `Task "nope" not found`)
		_, _, _, err = wsExec(t, base, "3f1c", "main", false, "", "true")
		must.ErrorContains(t, err, `Unknown allocation "3f1c"`)
		_, _, _, err = wsExec(t, base, "00000000-0000-4000-8000-000000000000", "main", false, "", "true")
		must.ErrorContains(t, err, `Unknown allocation "00000000-0000-4000-8000-000000000000"`)
	})

	t.Run("exec with the api client", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code, err := c.Allocations().Exec(t.Context(), alloc, "main", false, []string{"/bin/sh", "-c", "echo api; exit 4"},
			strings.NewReader(""), &stdout, &stderr, make(chan api.TerminalSize), nil)
		must.NoError(t, err)
		must.Eq(t, 4, code)
		must.Eq(t, "api\n", stdout.String())
	})

	t.Run("fs", func(t *testing.T) {
		code, body := httpGet(t, base+"/v1/client/fs/cat/"+alloc.ID[:8]+"?path=/main/out.txt")
		must.Eq(t, http.StatusNotFound, code)
		must.StrContains(t, body, "Unknown allocation")
		code, body = httpGet(t, fsURL("cat", "/main/out.txt"))
		must.Eq(t, http.StatusOK, code)
		must.Eq(t, "written\n", body)

		code, body = httpGet(t, fsURL("readat", "/main/out.txt")+"&offset=2&limit=3")
		must.Eq(t, http.StatusOK, code)
		must.Eq(t, "itt", body)

		var files []*api.AllocFileInfo
		code, body = httpGet(t, fsURL("ls", "/"))
		must.Eq(t, http.StatusOK, code)
		must.NoError(t, json.Unmarshal([]byte(body), &files))
		var names []string
		for _, f := range files {
			names = append(names, f.Name)
		}
		must.SliceContainsAll(t, names, []string{"alloc", "main"})

		var st api.AllocFileInfo
		code, body = httpGet(t, fsURL("stat", "/main/out.txt"))
		must.Eq(t, http.StatusOK, code)
		must.NoError(t, json.Unmarshal([]byte(body), &st))
		must.Eq(t, int64(len("written\n")), st.Size)
		must.False(t, st.IsDir)

		code, body = httpGet(t, fsURL("stream", "/main/out.txt")+"&follow=false")
		must.Eq(t, http.StatusOK, code)
		var got []byte
		dec := json.NewDecoder(strings.NewReader(body))
		for dec.More() {
			var f api.StreamFrame
			must.NoError(t, dec.Decode(&f))
			got = append(got, f.Data...)
		}
		must.Eq(t, "written\n", string(got))

		// Following: appended data arrives as frames, a truncation is told
		// (the file comes back shorter than what was read, either empty or
		// with the 6 bytes of "three").
		_, _, code2, err := wsExec(t, base, alloc.ID, "main", false, "", "/bin/sh", "-c", "echo one > grow.txt")
		must.NoError(t, err)
		must.Zero(t, code2)
		resp, err := http.Get(fsURL("stream", "/main/grow.txt"))
		must.NoError(t, err)
		defer resp.Body.Close()
		frames := json.NewDecoder(resp.Body)
		next := func() api.StreamFrame {
			for {
				var f api.StreamFrame
				must.NoError(t, frames.Decode(&f))
				if !f.IsHeartbeat() {
					return f
				}
			}
		}
		f := next()
		must.Eq(t, "one\n", string(f.Data))
		must.Eq(t, int64(4), f.Offset)
		_, _, _, err = wsExec(t, base, alloc.ID, "main", false, "", "/bin/sh", "-c", "echo two >> grow.txt")
		must.NoError(t, err)
		f = next()
		must.Eq(t, "two\n", string(f.Data))
		must.Eq(t, int64(8), f.Offset)
		_, _, _, err = wsExec(t, base, alloc.ID, "main", false, "", "/bin/sh", "-c", ": > grow.txt; echo three >> grow.txt")
		must.NoError(t, err)
		f = next()
		must.Eq(t, "file truncated", f.FileEvent)
		f = next()
		must.Eq(t, "three\n", string(f.Data))

		refused := []struct {
			path string
			code int
			msg  string
		}{
			{"../../etc/passwd", http.StatusBadRequest, "escapes the allocation directory"},
			{"/main/../../../etc/passwd", http.StatusBadRequest, "escapes the allocation directory"},
			{"/main/leak", http.StatusBadRequest, "a symlink leads out of it"},
			// An absolute path is read from the alloc dir, never the host.
			{"/etc/passwd", http.StatusNotFound, "does not exist"},
		}
		for _, r := range refused {
			for _, op := range []string{"cat", "stat", "ls", "stream"} {
				code, body := httpGet(t, fsURL(op, r.path))
				must.Eq(t, r.code, code, must.Sprint(op, " ", r.path, ": ", body))
				must.StrContains(t, body, r.msg)
				must.StrNotContains(t, body, "root:")
			}
		}
	})

	t.Run("signal", func(t *testing.T) {
		code, _, body := httpPut(t, base+"/v1/client/allocation/"+alloc.ID+"/signal", map[string]string{"Signal": "SIGUSR1", "Task": "main"})
		must.Eq(t, http.StatusOK, code, must.Sprint(body))
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			_, body := httpGet(t, fsURL("cat", "/main/signal.txt"))
			return body == "got-usr1\n"
		}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
		code, _, body = httpPut(t, base+"/v1/client/allocation/"+alloc.ID+"/signal", map[string]string{"Signal": "SIGNOPE"})
		must.Eq(t, http.StatusBadRequest, code)
		must.StrContains(t, body, `"SIGNOPE"`)
	})

	t.Run("restart", func(t *testing.T) {
		code, _, body := httpPut(t, base+"/v1/client/allocation/"+alloc.ID+"/restart", map[string]string{"TaskName": "main"})
		must.Eq(t, http.StatusOK, code, must.Sprint(body))
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
			a, _, err := c.Allocations().Info(alloc.ID, nil)
			if err != nil {
				return err
			}
			ts := a.TaskStates["main"]
			_, starts := httpGet(t, fsURL("cat", "/main/starts.txt"))
			if ts == nil || ts.Restarts != 1 || ts.State != "running" || starts != "start\nstart\n" {
				return fmt.Errorf("task state %+v, starts %q", ts, starts)
			}
			return nil
		}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	})

	t.Run("stop", func(t *testing.T) {
		code, _, body := httpPut(t, base+"/v1/allocation/"+alloc.ID[:8]+"/stop", nil)
		must.Eq(t, http.StatusNotFound, code)
		must.StrContains(t, body, "alloc not found")
		resp, err := c.Allocations().Stop(alloc, nil)
		must.NoError(t, err)
		must.Positive(t, resp.LastIndex)
		ev := waitEvalTerminal(t, c, resp.EvalID)
		must.Eq(t, "alloc-stop", ev.TriggeredBy)
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
			old, _, err := c.Allocations().Info(alloc.ID, nil)
			if err != nil {
				return err
			}
			if old.DesiredStatus != "stop" || old.ClientStatus == "running" {
				return fmt.Errorf("stopped alloc is %s/%s", old.DesiredStatus, old.ClientStatus)
			}
			allocs, _, err := c.Jobs().Allocations("life", true, nil)
			if err != nil {
				return err
			}
			var replaced bool
			for _, a := range allocs {
				if a.ID != alloc.ID && a.ClientStatus == "running" {
					replaced = true
				}
			}
			if !replaced {
				return fmt.Errorf("no replacement yet: %v", maxRunSummary(allocs))
			}
			sum, _, err := c.Jobs().Summary("life", nil)
			if err != nil {
				return err
			}
			g := sum.Summary["g"]
			if g.Running != 1 || g.Complete+g.Failed != 1 {
				return fmt.Errorf("summary %+v", g)
			}
			return nil
		}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
	})
}

// With ACLs on, each operation needs its capability in the alloc's
// namespace, checked where the request arrives (the server agent) and
// again on the node it is forwarded to.
func TestAllocLifecycle_ACL(t *testing.T) {
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false; c.ACL.Enabled = true })
	NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.ACL.Enabled = true
		c.DataDir = t.TempDir()
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
	})
	c := apiClient(t, srv)
	root, _, err := c.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	c.SetSecretID(root.SecretID)
	job := api.NewBatchJob("acl-life", "acl-life", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.AddTask(shTask("main", "echo written > out.txt; while true; do sleep 0.1; done"))
	job.AddTaskGroup(tg)
	register(t, c, job)
	alloc := onlyAlloc(t, c, "acl-life", isRunning)

	token := func(name, rules string) string {
		_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
		must.NoError(t, err)
		tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
		must.NoError(t, err)
		return tok.SecretID
	}
	reader := token("reader", `namespace "default" { policy = "read" }`)
	writer := token("writer", `namespace "default" { policy = "write" }`)

	do := func(method, path, body, secret string) int {
		req, err := http.NewRequest(method, srv.HTTPAddr()+path, strings.NewReader(body))
		must.NoError(t, err)
		req.Header.Set("X-Nomad-Token", secret)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.StatusCode
	}
	cases := []struct {
		name, method, path, body string
	}{
		{"fs cat", http.MethodGet, "/v1/client/fs/cat/" + alloc.ID + "?path=/main/out.txt", ""},
		{"fs ls", http.MethodGet, "/v1/client/fs/ls/" + alloc.ID + "?path=/", ""},
		{"signal", http.MethodPut, "/v1/client/allocation/" + alloc.ID + "/signal", `{"Signal":"SIGCONT","Task":"main"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, http.StatusForbidden, do(tc.method, tc.path, tc.body, reader))
			must.Eq(t, http.StatusOK, do(tc.method, tc.path, tc.body, writer))
		})
	}

	raw, _ := json.Marshal([]string{"echo", "hi"})
	u := "ws" + strings.TrimPrefix(srv.HTTPAddr(), "http") + "/v1/client/allocation/" + alloc.ID + "/exec?task=main&command=" + url.QueryEscape(string(raw))
	for _, tc := range []struct {
		secret string
		ok     bool
	}{{reader, false}, {writer, true}} {
		conn, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"X-Nomad-Token": {tc.secret}})
		if !tc.ok {
			must.Error(t, err)
			must.Eq(t, http.StatusForbidden, resp.StatusCode)
			continue
		}
		must.NoError(t, err)
		must.NoError(t, conn.WriteJSON(map[string]any{"stdin": map[string]any{"close": true}}))
		var out bytes.Buffer
		for {
			var f struct {
				Stdout *struct{ Data []byte } `json:"stdout"`
				Exited bool                   `json:"exited"`
			}
			must.NoError(t, conn.ReadJSON(&f))
			if f.Stdout != nil {
				out.Write(f.Stdout.Data)
			}
			if f.Exited {
				break
			}
		}
		conn.Close()
		must.Eq(t, "hi\n", out.String())
	}

	must.Eq(t, http.StatusForbidden, do(http.MethodPut, "/v1/allocation/"+alloc.ID+"/stop", "", reader))
	must.Eq(t, http.StatusOK, do(http.MethodPut, "/v1/allocation/"+alloc.ID+"/stop", "", writer))

	// Leave nothing running for the agents' shutdown: the stop places a
	// replacement, whose directory the client was still making while the
	// test removed its data dir (2 runs in 10 failed that way).
	_, _, err = c.Jobs().Deregister("acl-life", false, nil)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		allocs, _, err := c.Jobs().Allocations("acl-life", true, nil)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.ClientStatus == "pending" || a.ClientStatus == "running" {
				return fmt.Errorf("alloc %s is still %s", a.ID, a.ClientStatus)
			}
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
}
