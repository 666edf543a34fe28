package taskrunner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	getter "github.com/hashicorp/go-getter/v2"

	"github.com/nomadq/nomadq/client/fsutil"
	"github.com/nomadq/nomadq/structs"
)

// Limits on what one artifact may unpack to and read, Nomad's client
// defaults (artifact.decompression_file_count_limit and
// decompression_size_limit, http_read_timeout, http_max_size).
const (
	artifactFilesLimit    = 4096
	artifactSizeLimit     = 100 << 30
	artifactReadTimeout   = 30 * time.Minute
	artifactMaxBytes      = 100 << 30
	artifactGitTimeout    = 30 * time.Minute
	artifactHeadFirstTime = 30 * time.Second
)

// artifactHook fetches a task's artifacts into its directory before the
// first run, as Nomad's artifact hook does. An artifact fetched once is
// not fetched again on a restart.
type artifactHook struct {
	emit func(*structs.TaskEvent)
	// done marks artifacts (by index) fetched in this client process.
	done map[int]bool
}

func newArtifactHook(emit func(*structs.TaskEvent)) *artifactHook {
	return &artifactHook{emit: emit, done: map[int]bool{}}
}

// Name implements prestartHook.
func (h *artifactHook) Name() string { return "artifacts" }

// Prestart implements prestartHook: it fetches each artifact not yet
// fetched, in order, and stops at the first failure.
func (h *artifactHook) Prestart(ctx context.Context, req *prestartRequest, _ *prestartResponse) error {
	pending := false
	for i := range req.Task.Artifacts {
		if !h.done[i] {
			pending = true
		}
	}
	if !pending {
		return nil
	}
	h.emit(NewEvent(structs.TaskDownloadingArtifacts))
	for i, a := range req.Task.Artifacts {
		if a == nil || h.done[i] {
			continue
		}
		if err := fetchArtifact(ctx, req, a); err != nil {
			err = fmt.Errorf("failed to download artifact %q: %w", a.GetterSource, err)
			e := NewEvent(structs.TaskArtifactDownloadFailed)
			e.DownloadError = err.Error()
			return &hookError{err: err, event: e}
		}
		h.done[i] = true
	}
	return nil
}

// fetchArtifact downloads one artifact into the task directory.
func fetchArtifact(ctx context.Context, req *prestartRequest, a *structs.TaskArtifact) error {
	env := req.Env
	src, err := artifactURL(env.Interpolate(a.GetterSource), a.GetterOptions, env)
	if err != nil {
		return err
	}
	dest, err := artifactDest(req.TaskDir, req.AllocDir, env.Interpolate(a.RelativeDest))
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	mode := getter.ModeAny
	switch a.GetterMode {
	case "file":
		mode = getter.ModeFile
	case "dir":
		mode = getter.ModeDir
	}
	header := make(http.Header, len(a.GetterHeaders))
	for k, v := range a.GetterHeaders {
		header.Set(k, env.Interpolate(v))
	}
	getters, err := artifactGetters(src, req.TaskDir, header, a.GetterInsecure, req.AllocDir)
	if err != nil {
		return err
	}
	c := &getter.Client{
		Getters:         getters,
		Decompressors:   getter.LimitedDecompressors(artifactFilesLimit, artifactSizeLimit),
		DisableSymlinks: true,
	}
	_, err = c.Get(ctx, &getter.Request{Src: src, Dst: dest, Pwd: req.TaskDir, GetMode: mode, Copy: true})
	if err != nil {
		return err
	}
	if a.Chown && req.Task.User != "" {
		return chownTree(dest, req.Task.User)
	}
	return nil
}

// artifactSchemes are the sources the client fetches: http, https, file
// and git. The others go-getter knows (s3, gcs, hg, smb) need credentials
// or tools the client does not manage and would act with the client's
// own cloud credentials; validation refuses them at registration, and a
// source that reaches the client anyway fails here.
var artifactSchemes = map[string]bool{"http": true, "https": true, "file": true, "git": true}

// gitDetectors turn the shorthand git sources (github.com/org/repo,
// gitlab.com/..., git@host:...) into git URLs, as Nomad's client does.
func gitDetectors() []getter.Detector {
	return []getter.Detector{new(getter.GitHubDetector), new(getter.GitLabDetector), new(getter.GitDetector)}
}

// artifactGetters checks that src is one the client fetches and builds
// the getters of its download: git first (it claims the shorthand git
// sources), then http(s) and file. The headers and the insecure flag go
// to the HTTP getter, and the file getter is kept to the allocation
// directory.
func artifactGetters(src, pwd string, header http.Header, insecure bool, allocDir string) ([]getter.Getter, error) {
	scheme := ""
	if i := strings.Index(src, "::"); i > 0 && !strings.Contains(src[:i], "/") {
		scheme = src[:i]
	} else if u, err := url.Parse(src); err == nil {
		scheme = u.Scheme
	}
	if scheme != "" && !artifactSchemes[scheme] {
		return nil, fmt.Errorf("download not supported for scheme '%s'", scheme)
	}
	git := &getter.GitGetter{Detectors: gitDetectors(), Timeout: artifactGitTimeout}
	if _, err := exec.LookPath("git"); err != nil {
		if ok, _ := getter.Detect(&getter.Request{Src: src, Pwd: pwd}, git); ok {
			return nil, errNoGit
		}
		git = nil
	}
	httpGetter := &getter.HttpGetter{
		Header:                header,
		ReadTimeout:           artifactReadTimeout,
		MaxBytes:              artifactMaxBytes,
		HeadFirstTimeout:      artifactHeadFirstTime,
		XTerraformGetDisabled: true,
	}
	if insecure {
		// go_getter's insecure option: TLS without verifying the
		// server's certificate.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the job asked for it
		httpGetter.Client = &http.Client{Transport: t}
	}
	getters := []getter.Getter{httpGetter, &allocFileGetter{allocDir: allocDir}}
	if git != nil {
		getters = append([]getter.Getter{git}, getters...)
	}
	return getters, nil
}

// artifactURL adds the artifact's options to its source as query
// parameters, which is how go-getter reads them (checksum, archive, ref,
// ...). A forced getter prefix ("git::") is kept in front.
func artifactURL(src string, options map[string]string, env *TaskEnv) (string, error) {
	if len(options) == 0 {
		return src, nil
	}
	forced := ""
	if i := strings.Index(src, "::"); i > 0 && !strings.Contains(src[:i], "/") {
		forced, src = src[:i+2], src[i+2:]
	}
	u, err := url.Parse(src)
	if err != nil {
		return "", fmt.Errorf("source %q is not a URL: %w", src, err)
	}
	q := u.Query()
	for k, v := range options {
		q.Set(k, env.Interpolate(v))
	}
	u.RawQuery = q.Encode()
	return forced + u.String(), nil
}

// insideDir joins rel to dir and refuses a result outside dir.
func insideDir(dir, rel string) (string, error) {
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, rel)
	}
	p = filepath.Clean(p)
	r, err := filepath.Rel(dir, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q escapes the task directory", rel)
	}
	return p, nil
}

// artifactDest is where an artifact with destination rel (interpolated)
// lands, as Nomad's client places it: an absolute path inside the
// allocation directory (${NOMAD_ALLOC_DIR}/x) is kept, any other path is
// taken from the task directory, and the result may reach the rest of the
// allocation directory, the shared "../alloc" above all, but not beyond
// it.
func artifactDest(taskDir, allocDir, rel string) (string, error) {
	p := filepath.Clean(rel)
	if !filepath.IsAbs(p) || !inAllocDir(allocDir, p) {
		p = filepath.Join(taskDir, rel)
	}
	if !inAllocDir(allocDir, p) {
		return "", fmt.Errorf("path %q escapes the allocation directory", rel)
	}
	return p, nil
}

// inAllocDir reports whether the absolute path p is allocDir or below it.
func inAllocDir(allocDir, p string) bool {
	r, err := filepath.Rel(allocDir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// allocFileGetter is go-getter's file getter kept to the allocation
// directory: the download runs as the client's user, and Nomad's artifact
// sandbox likewise lets it read only the allocation's files, so a job
// cannot copy the host's files (keys, shadow) into a task it can read.
// Directories are copied, not linked.
type allocFileGetter struct {
	getter.FileGetter
	allocDir string
}

// source returns the path a file source URL names, if it is inside the
// allocation directory.
func (g *allocFileGetter) source(u *url.URL) (string, error) {
	p := u.Path
	if u.RawPath != "" {
		p = u.RawPath
	}
	if _, err := insideDir(g.allocDir, p); err != nil {
		return "", fmt.Errorf("file source %q is outside the allocation directory", p)
	}
	return p, nil
}

// Mode implements getter.Getter.
func (g *allocFileGetter) Mode(ctx context.Context, u *url.URL) (getter.Mode, error) {
	if _, err := g.source(u); err != nil {
		return getter.ModeInvalid, err
	}
	return g.FileGetter.Mode(ctx, u)
}

// Get implements getter.Getter: it copies the source directory's regular
// files and directories (a symlink in it fails the download).
func (g *allocFileGetter) Get(ctx context.Context, req *getter.Request) error {
	src, err := g.source(req.URL())
	if err != nil {
		return err
	}
	return copyTree(ctx, src, req.Dst)
}

// GetFile implements getter.Getter.
func (g *allocFileGetter) GetFile(ctx context.Context, req *getter.Request) error {
	if _, err := g.source(req.URL()); err != nil {
		return err
	}
	return g.FileGetter.GetFile(ctx, req)
}

// copyTree copies the directory src to dst.
func copyTree(ctx context.Context, src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("source path error: %w", err)
	}
	if !fi.IsDir() {
		return errors.New("source path must be a directory")
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			return fsutil.CopyFile(p, target, info.Mode().Perm())
		default:
			return fmt.Errorf("file source %q: %s is not a regular file or directory", src, rel)
		}
	})
}

// errNoGit answers git sources on a client without git.
var errNoGit = errors.New("git sources need the git command, which is not installed on this client")

// chownTree gives the task's user every file of an artifact (chown =
// true).
func chownTree(root, username string) error {
	u, err := user.Lookup(username)
	if err != nil {
		return fmt.Errorf("chown: %w", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return fmt.Errorf("chown: user %q has uid %q", username, u.Uid)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return fmt.Errorf("chown: user %q has gid %q", username, u.Gid)
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("chown: %w", err)
		}
		return nil
	})
}
