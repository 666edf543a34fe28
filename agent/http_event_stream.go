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
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/nomad"
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
	sub := broker.Subscribe(nomad.SubscribeRequest{Topics: topics, Namespace: namespace, Index: index})

	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, errors.New("event stream: the connection cannot be taken over")
	}
	conn, bufrw, err := hj.Hijack()
	if err != nil {
		return nil, fmt.Errorf("event stream: take over the connection: %w", err)
	}
	defer conn.Close()
	streamEvents(r.Context(), conn, bufrw, sub)
	return handled{}, nil
}

// streamEvents writes the subscription to conn until one side ends. The
// body is delimited by closing the connection (no chunking), so a client
// sees a clean EOF when the server goes away, as with Nomad.
func streamEvents(ctx context.Context, conn net.Conn, bufrw *bufio.ReadWriter, sub *nomad.Subscription) {
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
			var dropped *nomad.SubscriptionDroppedError
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
	namespaces := []string{r.URL.Query().Get("namespace")}
	switch namespaces[0] {
	case "":
		namespaces[0] = structs.DefaultNamespace
	case "*":
		// Every namespace there is, not only those the token may see:
		// the stream would carry them all.
		srv := h.agent.Server()
		if srv == nil {
			return nil // the handler refuses: no server here
		}
		all, err := srv.State().NamespacesByNamePrefix(nil, "")
		if err != nil {
			return err
		}
		namespaces = namespaces[:0]
		for _, ns := range all {
			namespaces = append(namespaces, ns.Name)
		}
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
