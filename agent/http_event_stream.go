package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/nomad/eventbroker"
	"github.com/nomadq/nomadq/structs"
)

// eventStreamHeartbeat is how often an idle event stream gets an empty
// {} line, as in Nomad, so proxies and clients see it is alive.
const eventStreamHeartbeat = 10 * time.Second

// eventStreamWriteTimeout bounds one write to a subscriber's connection:
// a reader that stops reading is cut off instead of holding the stream.
const eventStreamWriteTimeout = 30 * time.Second

// eventStreamRequest answers GET /v1/event/stream: newline-delimited
// JSON, one {"Index":N,"Events":[...]} line per Raft entry with selected
// events, {} every 10 seconds when idle. The stream is served by this
// agent's server from its own event buffer. It ends when the client goes
// away, when the server shuts down (EOF), or with a last
// {"Index":N,"Err":"..."} line when the subscriber fell so far behind
// that events it had not read left the buffer.
func (h *httpHandler) eventStreamRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	q := r.URL.Query()
	var index uint64
	if s := q.Get("index"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Unable to parse index: %q is not an unsigned integer", s)
		}
		index = n
	}
	topics, err := parseEventTopics(q)
	if err != nil {
		return nil, codedErr(http.StatusBadRequest, "Invalid topic query: %v", err)
	}
	namespace := q.Get("namespace")
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	if region := q.Get("region"); region != "" && region != h.agent.config.Region {
		return nil, codedErr(http.StatusBadRequest, "No path to region %q", region)
	}
	srv := h.agent.Server()
	if srv == nil {
		return nil, codedErr(http.StatusNotImplemented, "the event stream is served by servers: this agent runs no server, query a server agent's address")
	}
	broker := srv.EventBroker()
	if broker == nil {
		return nil, codedErr(http.StatusServiceUnavailable, "the event stream is disabled on this server (server.enable_event_broker = false)")
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	req := eventbroker.SubscribeRequest{Topics: topics, Namespace: namespace, Index: index}
	if h.agent.config.ACL.Enabled {
		if req.Allow, err = h.followStreamACL(ctx, cancel, srv, authToken(r), namespace, topics); err != nil {
			return nil, err
		}
	}
	sub := broker.Subscribe(req)

	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, errors.New("event stream: the connection cannot be taken over")
	}
	conn, bufrw, err := hj.Hijack()
	if err != nil {
		return nil, fmt.Errorf("event stream: take over the connection: %w", err)
	}
	defer conn.Close()
	streamEvents(ctx, conn, bufrw, sub)
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		h.logger.Debug("event stream ended", "error", err)
	}
	return handled{}, nil
}

// followStreamACL returns the per-event check of a stream's token and
// keeps it current: the server's watch of the token and of the policies
// and roles refreshes it, and ends the stream (cancel, with the reason)
// when the token is deleted or expires, or when its policies no longer
// grant the subscription. Nomad's server then sends its streaming RPC an
// error frame ("subscription closed by server, client should
// resubscribe"), which its HTTP layer cannot write after the stream's 200
// header; the HTTP client sees the stream end (EOF), and so it does here.
func (h *httpHandler) followStreamACL(ctx context.Context, cancel context.CancelCauseFunc, srv *nomad.Server, secret, namespace string, topics map[structs.Topic][]string) (func(*structs.Event) bool, error) {
	namespaces, err := streamNamespaces(srv, namespace)
	if err != nil {
		return nil, err
	}
	a, _, err := srv.ResolveACL(secret)
	if err != nil {
		return nil, rpcError(err)
	}
	var current atomic.Pointer[acl.ACL]
	current.Store(a)
	go func() {
		err := srv.WatchACL(ctx, secret, func(a *acl.ACL) error {
			if err := eventStreamCheck(a, namespaces, topics); err != nil {
				return fmt.Errorf("the token no longer grants this subscription: %w", err)
			}
			current.Store(a)
			return nil
		})
		if err != nil {
			cancel(err)
		}
	}()
	return func(ev *structs.Event) bool { return eventAllowed(current.Load(), ev) }, nil
}

// eventAllowed reports whether a token with ACL a may see event ev, as
// Nomad decides per topic: read-job in the event's namespace for jobs,
// evaluations, allocations and deployments, node read for nodes, list on
// the variable's path for variables, a management token for the rest.
func eventAllowed(a *acl.ACL, ev *structs.Event) bool {
	switch ev.Topic {
	case structs.TopicJob, structs.TopicEvaluation, structs.TopicAllocation, structs.TopicDeployment:
		return a.AllowNamespaceOperation(ev.Namespace, acl.NamespaceCapabilityReadJob)
	case structs.TopicNode:
		return a.AllowNodeRead()
	case structs.TopicVariable:
		return a.AllowVariableOperation(ev.Namespace, ev.Key, acl.VariablesCapabilityList)
	}
	return a.IsManagement()
}

// streamEvents writes the subscription to conn until one side ends. The
// body is delimited by closing the connection (no chunking), so a client
// sees a clean EOF when the server goes away, as with Nomad.
func streamEvents(ctx context.Context, conn net.Conn, bufrw *bufio.ReadWriter, sub *eventbroker.Subscription) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The client sends nothing more; a read returns when it hangs up.
	go func() {
		_, _ = io.Copy(io.Discard, bufrw)
		cancel()
	}()

	write := func(b []byte) error {
		_ = conn.SetWriteDeadline(time.Now().Add(eventStreamWriteTimeout))
		_, err := conn.Write(b)
		return err
	}
	header := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
	if write([]byte(header)) != nil {
		return
	}

	type next struct {
		events *structs.Events
		err    error
	}
	nextCh := make(chan next)
	go func() {
		for {
			ev, err := sub.Next(ctx)
			select {
			case nextCh <- next{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	heartbeat := time.NewTicker(eventStreamHeartbeat)
	defer heartbeat.Stop()
	var last uint64
	for {
		var line []byte
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
			line = []byte("{}\n")
		case n := <-nextCh:
			var dropped *eventbroker.SubscriptionDroppedError
			switch {
			case errors.As(n.err, &dropped):
				line = encodeEventLine(map[string]any{"Index": last, "Err": n.err.Error()})
			case n.err != nil:
				return // server shutdown, or the client left
			default:
				last = n.events.Index
				line = encodeEventLine(eventsView(n.events))
			}
			if n.err != nil {
				_ = write(line)
				return
			}
		}
		if write(line) != nil {
			return
		}
	}
}

// eventsView shows payloads as the rest of the API does: a variable's
// lock durations as strings. The batch is shared with other subscribers,
// so changed events go into a new one.
func eventsView(b *structs.Events) *structs.Events {
	out := &structs.Events{Index: b.Index, Events: slices.Clone(b.Events)}
	for i, ev := range out.Events {
		if p, ok := ev.Payload.(*structs.VariableEvent); ok {
			out.Events[i].Payload = map[string]any{"Variable": variableMetaView(p.Variable), "Deleted": p.Deleted}
		}
	}
	return out
}

func encodeEventLine(obj any) []byte {
	var b []byte
	if err := codec.NewEncoderBytes(&b, structs.JsonHandle).Encode(obj); err != nil {
		return []byte(fmt.Sprintf("{\"Err\":%q}\n", "encode events: "+err.Error()))
	}
	return append(b, '\n')
}

// parseEventTopics reads the topic parameters, Topic or Topic:Key, as
// Nomad does; none selects every topic. Topics nomadq does not produce
// are refused by name.
func parseEventTopics(q url.Values) (map[structs.Topic][]string, error) {
	raw, ok := q["topic"]
	if !ok {
		return map[structs.Topic][]string{structs.TopicAll: {"*"}}, nil
	}
	topics := make(map[structs.Topic][]string)
	for _, t := range raw {
		parts := strings.Split(t, ":")
		key := "*"
		switch len(parts) {
		case 1:
		case 2:
			key = parts[1]
		default:
			return nil, fmt.Errorf("error parsing topics: Invalid key value pair for topic, topic: %s", t)
		}
		topic := structs.Topic(parts[0])
		if topic != structs.TopicAll && !slices.Contains(structs.StreamTopics, topic) {
			names := make([]string, 0, len(structs.StreamTopics))
			for _, s := range structs.StreamTopics {
				names = append(names, string(s))
			}
			return nil, fmt.Errorf("topic %q is not supported: the topics are %s, or * for all", parts[0], strings.Join(names, ", "))
		}
		if key == "" {
			return nil, fmt.Errorf("topic %q has an empty key: give Topic, Topic:Key or Topic:*", t)
		}
		topics[topic] = append(topics[topic], key)
	}
	return topics, nil
}

// eventStreamRule checks, as Nomad does, that the token may follow every
// topic it asks for in every namespace it asks for ("*": each namespace
// there is): read-job for jobs, evaluations, allocations and deployments,
// node read for nodes, some variable capability for variables, and a
// management token for node pools and the "*" topic. Bad parameters are
// left to the handler, which words them.
func eventStreamRule(h *httpHandler, r *http.Request) error {
	topics, err := parseEventTopics(r.URL.Query())
	if err != nil {
		return nil
	}
	a, err := h.agent.resolveACL(authToken(r))
	if err != nil {
		return err
	}
	if a.IsManagement() {
		return nil
	}
	srv := h.agent.Server()
	if srv == nil {
		return nil // the handler refuses: no server here
	}
	namespaces, err := streamNamespaces(srv, r.URL.Query().Get("namespace"))
	if err != nil {
		return err
	}
	return eventStreamCheck(a, namespaces, topics)
}

// streamNamespaces lists the namespaces a subscription to namespace asks
// for: "*" is every namespace there is, not only those the token may
// see, since the stream would carry them all.
func streamNamespaces(srv *nomad.Server, namespace string) ([]string, error) {
	switch namespace {
	case "":
		return []string{structs.DefaultNamespace}, nil
	case "*":
		all, err := srv.State().NamespacesByNamePrefix(nil, "")
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(all))
		for _, ns := range all {
			out = append(out, ns.Name)
		}
		return out, nil
	}
	return []string{namespace}, nil
}

// eventStreamCheck reports whether ACL a may follow topics in each of
// namespaces.
func eventStreamCheck(a *acl.ACL, namespaces []string, topics map[structs.Topic][]string) error {
	if a.IsManagement() {
		return nil
	}
	for _, ns := range namespaces {
		for topic := range topics {
			var ok bool
			switch topic {
			case structs.TopicJob, structs.TopicEvaluation, structs.TopicAllocation, structs.TopicDeployment:
				ok = a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
			case structs.TopicNode:
				ok = a.AllowNodeRead()
			case structs.TopicVariable:
				ok = a.AllowVariableSearch(ns)
			}
			if !ok {
				return errPermissionDenied
			}
		}
	}
	return nil
}
