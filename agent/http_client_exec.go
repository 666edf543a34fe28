package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/nomadq/nomadq/client/drivers"
)

// execUpgrader upgrades /exec requests. Origins are not checked, as in
// Nomad: the API is not cookie-authenticated, so a foreign page gains
// nothing a direct client would not have.
var execUpgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// execIO is one data operation of an exec frame; Data is base64 in JSON.
type execIO struct {
	Data  []byte `json:"data,omitempty"`
	Close bool   `json:"close,omitempty"`
}

// execInput is a frame from the exec client: stdin, a terminal size, or
// nothing at all (a heartbeat).
type execInput struct {
	Stdin   *execIO `json:"stdin,omitempty"`
	TTYSize *struct {
		Height int `json:"height,omitempty"`
		Width  int `json:"width,omitempty"`
	} `json:"tty_size,omitempty"`
}

// execOutput is a frame to the exec client.
type execOutput struct {
	Stdout *execIO     `json:"stdout,omitempty"`
	Stderr *execIO     `json:"stderr,omitempty"`
	Exited bool        `json:"exited,omitempty"`
	Result *execResult `json:"result,omitempty"`
}

type execResult struct {
	ExitCode int `json:"exit_code"`
}

// execConn serialises writes to the WebSocket, which allows one writer
// at a time.
type execConn struct {
	mu sync.Mutex
	ws *websocket.Conn
}

func (c *execConn) send(v *execOutput) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(v)
}

// fail closes the session with err's text, which the api client returns
// as the error: 1011 for a server fault, 1008 for the rest, as Nomad.
func (c *execConn) fail(err error) {
	err = rpcError(err)
	code := websocket.ClosePolicyViolation
	var ce *CodedError
	if !errors.As(err, &ce) || ce.Code >= 500 {
		code = websocket.CloseInternalServerErr
	}
	msg := err.Error()
	// A close frame's reason is at most 123 bytes.
	if len(msg) > 123 {
		msg = msg[:120] + "..."
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, msg), time.Now().Add(5*time.Second))
}

// streamWriter sends what a command writes as stdout or stderr frames.
type streamWriter struct {
	c      *execConn
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	data := append([]byte(nil), p...)
	out := &execOutput{Stdout: &execIO{Data: data}}
	if w.stderr {
		out = &execOutput{Stderr: &execIO{Data: data}}
	}
	if err := w.c.send(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// execParams are the query parameters of an exec request.
type execParams struct {
	task    string
	command []string
	tty     bool
}

func parseExecParams(r *http.Request) (execParams, error) {
	q := r.URL.Query()
	p := execParams{task: q.Get("task")}
	if p.task == "" {
		return p, codedErr(http.StatusBadRequest, "task is required: name the task to run the command in")
	}
	raw := q.Get("command")
	if raw == "" {
		return p, codedErr(http.StatusBadRequest, "command is required: a JSON array such as [\"/bin/sh\"]")
	}
	if err := json.Unmarshal([]byte(raw), &p.command); err != nil {
		return p, codedErr(http.StatusBadRequest, "command must be a JSON array of strings, got %q", raw)
	}
	if len(p.command) == 0 || p.command[0] == "" {
		return p, codedErr(http.StatusBadRequest, "command must name a program, got %q", raw)
	}
	if s := q.Get("tty"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return p, codedErr(http.StatusBadRequest, "tty must be a bool, got %q", s)
		}
		p.tty = b
	}
	return p, nil
}

// clientAllocExec serves the /v1/client/allocation/:id/exec WebSocket. The
// session is upgraded before any check, so that errors reach the api
// client as the close reason it reports; a request for an alloc of
// another node is passed through to that node before upgrading.
func (h *httpHandler) clientAllocExec(w http.ResponseWriter, r *http.Request, allocID string) (any, error) {
	t, lerr := h.locateAlloc(r, allocID)
	if lerr == nil && t.ce == nil {
		h.forward(w, r, t.addr)
		return handled{}, nil
	}
	if !websocket.IsWebSocketUpgrade(r) {
		if lerr != nil {
			return nil, lerr
		}
		return nil, codedErr(http.StatusBadRequest, "exec needs a WebSocket connection (Upgrade: websocket)")
	}
	ws, err := execUpgrader.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader has answered the client.
		return handled{}, nil
	}
	defer ws.Close()
	c := &execConn{ws: ws}
	if lerr != nil {
		c.fail(lerr)
		return handled{}, nil
	}
	p, err := parseExecParams(r)
	if err == nil {
		err = h.checkTask(t, p.task)
	}
	if err != nil {
		c.fail(err)
		return handled{}, nil
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stdinR, stdinW := io.Pipe()
	resize := make(chan drivers.TerminalSize, 4)
	go readExecInput(ws, stdinW, resize, cancel)

	opts := &drivers.ExecOptions{
		Command: p.command,
		Tty:     p.tty,
		Stdin:   stdinR,
		Stdout:  streamWriter{c: c},
		Stderr:  streamWriter{c: c, stderr: true},
		Resize:  resize,
	}
	code, err := t.ce.ExecAlloc(ctx, t.alloc.ID, p.task, opts)
	stdinR.Close()
	if err != nil {
		c.fail(taskOpError(err))
		return handled{}, nil
	}
	_ = c.send(&execOutput{Exited: true, Result: &execResult{ExitCode: code}})
	c.mu.Lock()
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(5*time.Second))
	c.mu.Unlock()
	return handled{}, nil
}

// readExecInput feeds the client's frames to the command until the
// connection ends, which cancels the command.
func readExecInput(ws *websocket.Conn, stdin *io.PipeWriter, resize chan<- drivers.TerminalSize, cancel context.CancelFunc) {
	defer cancel()
	for {
		var in execInput
		if err := ws.ReadJSON(&in); err != nil {
			stdin.CloseWithError(io.EOF)
			return
		}
		switch {
		case in.Stdin != nil:
			if len(in.Stdin.Data) > 0 {
				if _, err := stdin.Write(in.Stdin.Data); err != nil {
					// The command stopped reading; keep serving frames.
					continue
				}
			}
			if in.Stdin.Close {
				stdin.Close()
			}
		case in.TTYSize != nil:
			select {
			case resize <- drivers.TerminalSize{Height: in.TTYSize.Height, Width: in.TTYSize.Width}:
			default:
			}
		}
	}
}
