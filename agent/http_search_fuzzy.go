package agent

import (
	"net/http"

	"github.com/nomadq/nomadq/structs"
)

// fuzzySearchBody is the body of /v1/search/fuzzy; the query options the
// client inlines are read from the URL instead.
type fuzzySearchBody struct {
	Text      string
	Context   string
	Namespace string
}

// fuzzySearchRequest answers PUT/POST /v1/search/fuzzy.
func (h *httpHandler) fuzzySearchRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body fuzzySearchBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Context == "" {
		return nil, codedErr(http.StatusBadRequest, "Search Context must be specified (for example \"all\" or \"jobs\")")
	}
	args := structs.FuzzySearchRequest{Text: body.Text, Context: body.Context}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if body.Namespace != "" && r.URL.Query().Get("namespace") == "" {
		args.Namespace = body.Namespace
	}
	var reply structs.FuzzySearchResponse
	if err := h.agent.rpc("Search.FuzzySearch", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return reply, nil
}
