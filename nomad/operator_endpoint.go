package nomad

import (
	"errors"
	"net/http"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Operator is the RPC endpoint for cluster operations.
type Operator struct {
	srv *Server
}

// SchedulerGetConfiguration reads the scheduler configuration.
func (o *Operator) SchedulerGetConfiguration(args *structs.GenericRequest, reply *structs.SchedulerConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerGetConfiguration", args.QueryOptions, args, reply); done {
		return err
	}
	return o.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index, cfg, err := st.SchedulerConfig()
		if err != nil {
			return 0, err
		}
		if cfg == nil {
			return 0, errors.New("scheduler config not initialized yet")
		}
		reply.SchedulerConfig = cfg
		return max(index, 1), nil
	})
}

// SchedulerSetConfiguration replaces the scheduler configuration, with a
// check-and-set on ModifyIndex when CAS is set. The whole configuration
// is checked as given: a zero batch queue setting is refused, not taken
// for its default (the HTTP API fills the fields a body leaves out).
func (o *Operator) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerSetConfiguration", args.WriteRequest, args, reply); done {
		return err
	}
	cfg := args.Config
	// An empty algorithm is Nomad's default, binpack.
	if cfg.SchedulerAlgorithm == "" {
		cfg.SchedulerAlgorithm = structs.SchedulerAlgorithmBinpack
	}
	if err := cfg.Validate(); err != nil {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "Invalid scheduler configuration: %v", err)
	}
	req := &structs.SchedulerSetConfigRequest{Config: cfg, CAS: args.CAS, WriteRequest: args.WriteRequest}
	resp, index, err := o.srv.raftApply(structs.SchedulerConfigRequestType, req)
	if err != nil {
		return structs.WrapRPCCodedf(err, "set scheduler configuration")
	}
	reply.Updated = true
	if ok, isBool := resp.(bool); isBool {
		reply.Updated = ok
	}
	reply.Index = index
	if err := o.srv.syncEvalBrokerPause(); err != nil {
		return structs.WrapRPCCodedf(err, "apply pause_eval_broker")
	}
	return nil
}
