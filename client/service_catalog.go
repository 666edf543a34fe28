package client

import (
	"context"
	"time"

	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

func (s variableSource) serviceQuery(q taskrunner.ServiceQuery) structs.QueryOptions {
	return structs.QueryOptions{
		Region:        s.region,
		Namespace:     q.Namespace,
		AuthToken:     q.Token,
		MinQueryIndex: q.MinIndex,
		MaxQueryTime:  int64(q.MaxWait),
	}
}

// ReadService implements taskrunner.ServiceSource: the registrations of
// one service, for templates' nomadService.
func (s variableSource) ReadService(ctx context.Context, q taskrunner.ServiceQuery) ([]*structs.ServiceRegistration, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, q.MaxWait+30*time.Second)
	defer cancel()
	var reply structs.ServiceRegistrationByNameResponse
	req := &structs.ServiceRegistrationByNameRequest{ServiceName: q.Name, Choose: q.Choose, QueryOptions: s.serviceQuery(q)}
	if err := s.rpc.Call(ctx, structs.ServiceRegistrationGetServiceRPCMethod, req, &reply); err != nil {
		return nil, 0, err
	}
	return reply.Services, reply.Index, nil
}

// ListServices implements taskrunner.ServiceSource: the service names
// and tags of a namespace, for templates' nomadServices.
func (s variableSource) ListServices(ctx context.Context, q taskrunner.ServiceQuery) ([]*structs.ServiceRegistrationListStub, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, q.MaxWait+30*time.Second)
	defer cancel()
	var reply structs.ServiceRegistrationListResponse
	req := &structs.ServiceRegistrationListRequest{QueryOptions: s.serviceQuery(q)}
	if err := s.rpc.Call(ctx, structs.ServiceRegistrationListRPCMethod, req, &reply); err != nil {
		return nil, 0, err
	}
	return reply.Services, reply.Index, nil
}
