package client

import (
	"context"
	"time"

	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

// variableSource reads Nomad Variables for templates from the servers,
// over the client's RPC connection, as the task: each call carries the
// task's workload identity, which the servers accept for the variables of
// the task's own job (and whatever else an ACL policy grants).
type variableSource struct {
	rpc    RPC
	region string
}

func (s variableSource) query(q taskrunner.VariableQuery) structs.QueryOptions {
	return structs.QueryOptions{
		Region:        s.region,
		Namespace:     q.Namespace,
		AuthToken:     q.Token,
		MinQueryIndex: q.MinIndex,
		MaxQueryTime:  int64(q.MaxWait),
	}
}

// callCtx bounds one call: a blocking query gets its wait and a margin.
func callCtx(ctx context.Context, q taskrunner.VariableQuery) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, q.MaxWait+30*time.Second)
}

// ReadVariable implements taskrunner.VariableSource.
func (s variableSource) ReadVariable(ctx context.Context, q taskrunner.VariableQuery) (*structs.VariableDecrypted, uint64, error) {
	ctx, cancel := callCtx(ctx, q)
	defer cancel()
	var reply structs.VariablesReadResponse
	if err := s.rpc.Call(ctx, "Variables.Read", &structs.VariablesReadRequest{Path: q.Path, QueryOptions: s.query(q)}, &reply); err != nil {
		return nil, 0, err
	}
	return reply.Data, reply.Index, nil
}

// ListVariables implements taskrunner.VariableSource.
func (s variableSource) ListVariables(ctx context.Context, q taskrunner.VariableQuery) ([]*structs.VariableMetadata, uint64, error) {
	ctx, cancel := callCtx(ctx, q)
	defer cancel()
	opts := s.query(q)
	opts.Prefix = q.Path
	var reply structs.VariablesListResponse
	if err := s.rpc.Call(ctx, "Variables.List", &structs.VariablesListRequest{QueryOptions: opts}, &reply); err != nil {
		return nil, 0, err
	}
	return reply.Data, reply.Index, nil
}
