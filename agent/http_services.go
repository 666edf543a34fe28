package agent

import (
	"net/http"
	"strings"

	"github.com/nomadq/nomadq/structs"
)

// servicesRequest answers GET /v1/services: the service names of the
// namespace ("*": every namespace the token may read) with their tags,
// one entry per namespace, as Nomad lists them.
func (h *httpHandler) servicesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ServiceRegistrationListRequest
	var reply structs.ServiceRegistrationListResponse
	if err := h.query(w, r, structs.ServiceRegistrationListRPCMethod, &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Services == nil {
		reply.Services = []*structs.ServiceRegistrationListStub{}
	}
	return reply.Services, nil
}

// serviceSpecificRequest answers /v1/service/:name (GET: its instances,
// with ?choose=, ?tag= and ?filter=) and /v1/service/:name/:id (DELETE:
// remove one registration).
func (h *httpHandler) serviceSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/service/"), "/")
	switch len(parts) {
	case 1:
		if r.Method != http.MethodGet {
			return nil, methodNotAllowed()
		}
		return h.serviceGet(w, r, parts[0])
	case 2:
		if r.Method != http.MethodDelete {
			return nil, methodNotAllowed()
		}
		if parts[1] == "" {
			return nil, codedErr(http.StatusBadRequest, "missing service id")
		}
		return h.serviceDelete(w, r, parts[1])
	}
	return nil, codedErr(http.StatusBadRequest, "invalid URI %q: want /v1/service/<name> or /v1/service/<name>/<id>", r.URL.Path)
}

func (h *httpHandler) serviceGet(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	args := structs.ServiceRegistrationByNameRequest{
		ServiceName: name,
		Choose:      r.URL.Query().Get("choose"),
		Tag:         r.URL.Query().Get("tag"),
	}
	var reply structs.ServiceRegistrationByNameResponse
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	// The server filters (before it chooses); paging is over what is left.
	if err := h.agent.rpc(structs.ServiceRegistrationGetServiceRPCMethod, &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	services := reply.Services
	if args.Choose == "" {
		services = page(&args.QueryOptions, services, func(s *structs.ServiceRegistration) string {
			return s.Namespace + "." + s.ID
		}, &reply.QueryMeta)
	}
	setMeta(w, &reply.QueryMeta)
	if services == nil {
		services = []*structs.ServiceRegistration{}
	}
	return services, nil
}

func (h *httpHandler) serviceDelete(w http.ResponseWriter, r *http.Request, id string) (any, error) {
	args := structs.ServiceRegistrationDeleteByIDRequest{ID: id}
	var reply structs.ServiceRegistrationDeleteByIDResponse
	if err := h.write(w, r, structs.ServiceRegistrationDeleteByIDRPCMethod, &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	// Nomad answers a delete with an empty body.
	return handled{}, nil
}
