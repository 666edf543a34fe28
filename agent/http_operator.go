package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// schedulerConfigBody is the body of a scheduler configuration write. The
// batch queue block is a pointer and its fields are pointers so that an
// absent BatchQueue keeps the stored one and absent fields inside take
// the defaults, while a value given explicitly is checked as given.
type schedulerConfigBody struct {
	SchedulerAlgorithm            string
	PreemptionConfig              structs.PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	NodeLimitForFeasibilityChecks uint
	BatchQueue                    *batchQueueBody
}

type batchQueueBody struct {
	Enabled              *bool
	Order                *string
	ConcurrentPlacements *int
	// WorkloadTimeout is nanoseconds on the wire; a duration string
	// ("5m") is accepted too.
	WorkloadTimeout json.RawMessage
	// Backfill absent takes the order's default.
	Backfill *bool
	// Multifactor absent takes the default weights; a weight absent
	// inside it is 0, a duration absent the default.
	Multifactor *multifactorBody
}

type multifactorBody struct {
	PriorityWeight  *float64
	AgeWeight       *float64
	FairShareWeight *float64
	SizeWeight      *float64
	// MaxAge and UsageHalfLife are nanoseconds or duration strings.
	MaxAge        json.RawMessage
	UsageHalfLife json.RawMessage
}

func (m *multifactorBody) toConfig() (structs.BatchQueueMultifactor, error) {
	c := structs.DefaultBatchQueueMultifactor()
	for _, w := range []struct {
		from *float64
		into *float64
	}{
		{m.PriorityWeight, &c.PriorityWeight}, {m.AgeWeight, &c.AgeWeight},
		{m.FairShareWeight, &c.FairShareWeight}, {m.SizeWeight, &c.SizeWeight},
	} {
		*w.into = 0
		if w.from != nil {
			*w.into = *w.from
		}
	}
	if err := durationField("BatchQueue.Multifactor.MaxAge", m.MaxAge, &c.MaxAge); err != nil {
		return c, err
	}
	return c, durationField("BatchQueue.Multifactor.UsageHalfLife", m.UsageHalfLife, &c.UsageHalfLife)
}

// durationField reads a duration sent as nanoseconds or as a duration
// string into dst; absent or null leaves dst as it is.
func durationField(name string, raw json.RawMessage, dst *time.Duration) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var ns int64
	if err := json.Unmarshal(raw, &ns); err == nil {
		*dst = time.Duration(ns)
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s must be a number of nanoseconds or a duration string, got %s", name, raw)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%s %q is not a duration", name, s)
	}
	*dst = d
	return nil
}

// toConfig builds the batch queue settings: the defaults for the fields
// the body leaves out (or sends as null), the body's values otherwise,
// which the server validates without replacing a zero.
func (b *batchQueueBody) toConfig() (structs.BatchQueueConfig, error) {
	var c structs.BatchQueueConfig
	c.Canonicalize()
	if b.Enabled != nil {
		c.Enabled = *b.Enabled
	}
	if b.Order != nil {
		c.Order = *b.Order
	}
	if b.ConcurrentPlacements != nil {
		c.ConcurrentPlacements = *b.ConcurrentPlacements
	}
	if err := durationField("BatchQueue.WorkloadTimeout", b.WorkloadTimeout, &c.WorkloadTimeout); err != nil {
		return c, err
	}
	c.Multifactor = structs.DefaultBatchQueueMultifactor()
	if b.Multifactor != nil {
		m, err := b.Multifactor.toConfig()
		if err != nil {
			return c, err
		}
		c.Multifactor = m
	}
	c.Backfill = structs.DefaultBatchQueueBackfill(c.Order)
	if b.Backfill != nil {
		c.Backfill = *b.Backfill
	}
	return c, nil
}

func (h *httpHandler) schedulerConfigRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	switch {
	case r.Method == http.MethodGet:
		args := structs.GenericRequest{}
		var reply structs.SchedulerConfigurationResponse
		if err := h.query(w, r, "Operator.SchedulerGetConfiguration", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		return reply, nil
	case isWrite(r):
		return h.schedulerSetConfig(w, r)
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) schedulerSetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	var body *schedulerConfigBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	// Nomad reads null as {} and stores the defaults; a null is more
	// likely a client that lost its configuration than one that wants
	// every setting reset, so it is refused. {} still means the defaults.
	if body == nil {
		return nil, codedErr(http.StatusBadRequest, "Invalid scheduler configuration: a null body is not allowed: send a JSON object ({} for the defaults)")
	}
	args := structs.SchedulerSetConfigRequest{}
	h.parseWrite(r, &args.WriteRequest)
	if s := r.URL.Query().Get("cas"); s != "" {
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Error parsing cas value: %q is not an unsigned integer", s)
		}
		args.CAS = true
		args.Config.ModifyIndex = idx
	}
	cfg := &args.Config
	cfg.SchedulerAlgorithm = body.SchedulerAlgorithm
	if cfg.SchedulerAlgorithm == "" {
		cfg.SchedulerAlgorithm = structs.SchedulerAlgorithmBinpack
	}
	cfg.PreemptionConfig = body.PreemptionConfig
	cfg.MemoryOversubscriptionEnabled = body.MemoryOversubscriptionEnabled
	cfg.RejectJobRegistration = body.RejectJobRegistration
	cfg.PauseEvalBroker = body.PauseEvalBroker
	cfg.NodeLimitForFeasibilityChecks = body.NodeLimitForFeasibilityChecks
	if body.BatchQueue != nil {
		bq, err := body.BatchQueue.toConfig()
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Invalid scheduler configuration: %v", err)
		}
		cfg.BatchQueue = bq
	} else {
		// The official client knows no BatchQueue: keep the stored one.
		get := structs.GenericRequest{}
		get.Region = args.Region
		get.AuthToken = args.AuthToken
		var cur structs.SchedulerConfigurationResponse
		if err := h.agent.rpc("Operator.SchedulerGetConfiguration", &get, &cur); err != nil {
			return nil, rpcError(err)
		}
		if cur.SchedulerConfig != nil {
			cfg.BatchQueue = cur.SchedulerConfig.BatchQueue
		}
	}
	var reply structs.SchedulerSetConfigurationResponse
	if err := h.agent.rpc("Operator.SchedulerSetConfiguration", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	return reply, nil
}

// searchBody is the body of /v1/search; the query options the client
// inlines are read from the URL instead.
type searchBody struct {
	Prefix    string
	Context   string
	Namespace string
}

func (h *httpHandler) searchRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body searchBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Context == "" {
		return nil, codedErr(http.StatusBadRequest, "Search Context must be specified (for example \"all\" or \"jobs\")")
	}
	args := structs.SearchRequest{Prefix: body.Prefix, Context: body.Context}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if body.Namespace != "" && r.URL.Query().Get("namespace") == "" {
		args.Namespace = body.Namespace
	}
	var reply structs.SearchResponse
	if err := h.agent.rpc("Search.PrefixSearch", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return reply, nil
}
