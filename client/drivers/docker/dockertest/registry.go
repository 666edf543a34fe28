package dockertest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Registry is the pull side of a Docker registry (API v2) on 127.0.0.1,
// which the engine reaches over plain HTTP as it does any loopback
// registry. It serves one image, the busybox rootfs, under every
// repository name, so each test can pull a name the engine has not seen.
type Registry struct {
	// Addr is "127.0.0.1:<port>", the image reference's registry part.
	Addr string
	// Manifests counts manifest requests (the engine asks once per pull,
	// by HEAD when it may have the image already, by GET otherwise).
	Manifests atomic.Int64

	srv            *httptest.Server
	user, password string
	manifest       []byte
	blobs          map[string][]byte

	mu   sync.Mutex
	gate chan struct{}
}

// NewRegistry starts a registry, closed when the test ends; with a user
// it asks for HTTP basic auth as a registry behind htpasswd does.
func NewRegistry(t testing.TB, user, password string) *Registry {
	t.Helper()
	rootfs, err := RootfsTar()
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(rootfs); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	layer := gz.Bytes()
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config":       map[string]any{"Env": []string{"PATH=/bin"}, "Cmd": []string{"/bin/sh"}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{digest(rootfs)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
		"config":        map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(config), "digest": digest(config)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": len(layer), "digest": digest(layer)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Registry{
		user: user, password: password, manifest: manifest,
		blobs: map[string][]byte{digest(config): config, digest(layer): layer},
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.Addr = strings.TrimPrefix(r.srv.URL, "http://")
	t.Cleanup(func() {
		r.Release()
		r.srv.Close()
	})
	return r
}

// Hold makes manifest requests wait until Release, so a test can have
// pulls overlap.
func (r *Registry) Hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate == nil {
		r.gate = make(chan struct{})
	}
}

// Release lets held and later manifest requests through.
func (r *Registry) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate != nil {
		close(r.gate)
		r.gate = nil
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	if r.user != "" {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.user || p != r.password {
			w.Header().Set("WWW-Authenticate", `Basic realm="nomadq-test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
	}
	path := req.URL.Path
	switch {
	case path == "/v2/" || path == "/v2":
		w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
		w.WriteHeader(http.StatusOK)
	case strings.Contains(path, "/manifests/"):
		r.Manifests.Add(1)
		r.mu.Lock()
		gate := r.gate
		r.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-req.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
		w.Header().Set("Docker-Content-Digest", digest(r.manifest))
		w.Header().Set("Content-Length", strconv.Itoa(len(r.manifest)))
		if req.Method == http.MethodGet {
			_, _ = w.Write(r.manifest)
		}
	case strings.Contains(path, "/blobs/"):
		d := path[strings.LastIndex(path, "/")+1:]
		b, ok := r.blobs[d]
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Docker-Content-Digest", d)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if req.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	default:
		http.NotFound(w, req)
	}
}
