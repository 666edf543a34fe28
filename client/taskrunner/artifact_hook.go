package taskrunner

import (
	"context"
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

	getter "github.com/hashicorp/go-getter"
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
	dest, err := insideDir(req.TaskDir, env.Interpolate(a.RelativeDest))
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	mode := getter.ClientModeAny
	switch a.GetterMode {
	case "file":
		mode = getter.ClientModeFile
	case "dir":
		mode = getter.ClientModeDir
	}
	header := make(http.Header, len(a.GetterHeaders))
	for k, v := range a.GetterHeaders {
		header.Set(k, env.Interpolate(v))
	}
	c := &getter.Client{
		Ctx:             ctx,
		Src:             src,
		Dst:             dest,
		Pwd:             req.TaskDir,
		Mode:            mode,
		Insecure:        a.GetterInsecure,
		DisableSymlinks: true,
		Detectors: []getter.Detector{
			new(getter.GitHubDetector),
			new(getter.GitLabDetector),
			new(getter.GitDetector),
			new(getter.FileDetector),
		},
		Decompressors: getter.LimitedDecompressors(artifactFilesLimit, artifactSizeLimit),
		Getters:       artifactGetterMap(header, req.AllocDir),
	}
	if err := c.Get(); err != nil {
		return err
	}
	if a.Chown && req.Task.User != "" {
		return chownTree(dest, req.Task.User)
	}
	return nil
}

// artifactGetterMap builds the getters of one download: http, https,
// file and git. The others go-getter knows (s3, gcs, hg, smb) need
// credentials or tools the client does not manage and would act with the
// client's own cloud credentials; a source that needs one fails with
// go-getter's "download not supported for scheme" error (and validation
// refuses the forced forms). The headers go to the HTTP getter, and the
// file getter is kept to the allocation directory.
func artifactGetterMap(header http.Header, allocDir string) map[string]getter.Getter {
	httpGetter := &getter.HttpGetter{
		Header:                header,
		ReadTimeout:           artifactReadTimeout,
		MaxBytes:              artifactMaxBytes,
		HeadFirstTimeout:      artifactHeadFirstTime,
		XTerraformGetDisabled: true,
	}
	m := map[string]getter.Getter{
		"http":  httpGetter,
		"https": httpGetter,
		"file":  &allocFileGetter{FileGetter: getter.FileGetter{Copy: true}, allocDir: allocDir},
	}
	if _, err := exec.LookPath("git"); err == nil {
		m["git"] = &getter.GitGetter{Timeout: artifactGitTimeout}
	} else {
		m["git"] = missingGitGetter{}
	}
	return m
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

// allocFileGetter is go-getter's file getter kept to the allocation
// directory: the download runs as the client's user, and Nomad's artifact
// sandbox likewise lets it read only the allocation's files, so a job
// cannot copy the host's files (keys, shadow) into a task it can read.
type allocFileGetter struct {
	getter.FileGetter
	allocDir string
}

func (g *allocFileGetter) check(u *url.URL) error {
	p := u.Path
	if u.RawPath != "" {
		p = u.RawPath
	}
	if _, err := insideDir(g.allocDir, p); err != nil {
		return fmt.Errorf("file source %q is outside the allocation directory", p)
	}
	return nil
}

// Get implements getter.Getter.
func (g *allocFileGetter) Get(dst string, u *url.URL) error {
	if err := g.check(u); err != nil {
		return err
	}
	return g.FileGetter.Get(dst, u)
}

// GetFile implements getter.Getter.
func (g *allocFileGetter) GetFile(dst string, u *url.URL) error {
	if err := g.check(u); err != nil {
		return err
	}
	return g.FileGetter.GetFile(dst, u)
}

// missingGitGetter answers git sources on a client without git.
type missingGitGetter struct{}

var errNoGit = fmt.Errorf("git sources need the git command, which is not installed on this client")

func (missingGitGetter) ClientMode(*url.URL) (getter.ClientMode, error) {
	return getter.ClientModeInvalid, errNoGit
}
func (missingGitGetter) Get(string, *url.URL) error     { return errNoGit }
func (missingGitGetter) GetFile(string, *url.URL) error { return errNoGit }
func (missingGitGetter) SetClient(*getter.Client)       {}

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
