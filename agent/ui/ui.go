// Package ui serves the web UI at /ui/: pages rendered on the server with
// html/template from the agent's own HTTP API, and a little hand-written
// JavaScript that keeps them live and sends actions.
//
// Every read goes through the API handler in process, with the user's
// token, so the UI sees exactly what the API would let that token see.
// The token is entered once and kept in the browser's session storage;
// the script copies it into a session cookie scoped to /ui (SameSite
// Strict) so that pages render without JavaScript too. The cookie is
// honoured only for reads: actions are sent by the script to /v1 with
// the X-Nomad-Token header, as Nomad's UI does, so a cross-site form can
// never act with it. The token never appears in a URL.
package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

//go:embed assets templates
var files embed.FS

// TokenCookie is the session cookie that carries the user's token to the
// pages the server renders; the script sets it from session storage.
const TokenCookie = "nomadq_ui_token"

// Server serves the UI's pages and assets.
type Server struct {
	api   http.Handler
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// apiError is a non-2xx answer of the API: its status and its text.
type apiError struct {
	Code int
	Msg  string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Msg) }

// New returns the UI served from api, the agent's HTTP API handler.
func New(api http.Handler) *Server {
	s := &Server{api: api, pages: map[string]*template.Template{}}
	base := template.Must(template.New("base").Funcs(funcs).ParseFS(files, "templates/layout.html"))
	entries, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, name := range entries {
		if name == "templates/layout.html" {
			continue
		}
		page := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		s.pages[page] = template.Must(template.Must(base.Clone()).ParseFS(files, name))
	}
	assets, err := fs.Sub(files, "assets")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /ui/assets/", http.StripPrefix("/ui/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/jobs", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /ui/jobs", s.jobsPage)
	mux.HandleFunc("GET /ui/jobs/{id}", s.jobPage)
	mux.HandleFunc("GET /ui/queue", s.queuePage)
	mux.HandleFunc("GET /ui/timeline", s.timelinePage)
	mux.HandleFunc("GET /ui/allocations/{id}", s.allocPage)
	mux.HandleFunc("GET /ui/clients", s.clientsPage)
	mux.HandleFunc("GET /ui/clients/{id}", s.clientPage)
	mux.HandleFunc("GET /ui/servers", s.serversPage)
	mux.HandleFunc("GET /ui/settings/tokens", s.tokensPage)
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		s.notFound(w, r, "No page at "+r.URL.Path)
	})
	s.mux = mux
	return s
}

// ServeHTTP serves one UI request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ui" {
		http.Redirect(w, r, "/ui/", http.StatusMovedPermanently)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
	s.mux.ServeHTTP(w, r)
}

// token is the user's token for a read: the header the script sends
// with a fragment request, else the session cookie.
func token(r *http.Request) string {
	if t := r.Header.Get("X-Nomad-Token"); t != "" {
		return t
	}
	if c, err := r.Cookie(TokenCookie); err == nil {
		if v, err := url.QueryUnescape(c.Value); err == nil {
			return v
		}
	}
	return ""
}

// get reads path from the API as the user of r and decodes the JSON
// answer into out.
func (s *Server) get(r *http.Request, path string, out any) error {
	req := httptest.NewRequestWithContext(r.Context(), http.MethodGet, path, nil)
	req.RemoteAddr = r.RemoteAddr
	if t := token(r); t != "" {
		req.Header.Set("X-Nomad-Token", t)
	}
	rec := httptest.NewRecorder()
	s.api.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code/100 != 2 {
		return &apiError{Code: rec.Code, Msg: strings.TrimSpace(string(body))}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// render writes page with data inside the layout, or only its "content"
// block when the script asks for a fragment (?fragment=1).
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, page, title string, data any) {
	t, ok := s.pages[page]
	if !ok {
		http.Error(w, "no template "+page, http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	name := "layout"
	if r.URL.Query().Get("fragment") == "1" {
		name = "content"
	}
	err := t.ExecuteTemplate(&buf, name, map[string]any{"Title": title, "Page": page, "D": data, "Path": r.URL.Path})
	if err != nil {
		http.Error(w, "render "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// notFound answers the 404 page with a link back.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	s.render(w, r, http.StatusNotFound, "error", "Not found", map[string]any{"Code": 404, "Msg": msg})
}

// fail answers an API error as a page: a 404 for an unknown object, a
// 403 asking for a token, and the API's code and words otherwise.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	var ae *apiError
	code, msg := http.StatusInternalServerError, err.Error()
	if errors.As(err, &ae) {
		code, msg = ae.Code, ae.Msg
	}
	if code == http.StatusNotFound {
		s.notFound(w, r, what+" not found")
		return
	}
	s.render(w, r, code, "error", http.StatusText(code), map[string]any{"Code": code, "Msg": what + ": " + msg})
}
