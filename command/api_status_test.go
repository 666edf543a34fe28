package command

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestResponseStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/namespace/missing":
			http.Error(w, "namespace not found", http.StatusNotFound)
		default:
			http.Error(w, "Permission denied", http.StatusForbidden)
		}
	}))
	defer srv.Close()
	client, err := api.NewClient(&api.Config{Address: srv.URL})
	must.NoError(t, err)

	_, _, err = client.Namespaces().Info("missing", nil)
	must.Error(t, err)
	must.Eq(t, http.StatusNotFound, responseStatus(err))

	_, err = resolveJob(client, "example")
	must.Error(t, err)
	must.Eq(t, http.StatusForbidden, responseStatus(err), must.Sprint("the status survives resolveJob's wrapping"))

	must.Eq(t, 0, responseStatus(errors.New("dial tcp: connection refused")))
	must.Eq(t, 0, responseStatus(fmt.Errorf("wrapped: %w", errors.New("404 page"))))
}
