package docker

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/distribution/reference"
	"github.com/moby/moby/api/types/registry"
)

// Registry credentials are found as Nomad finds them, the first that has
// any: the task's auth block, then the plugin's auth.config (a docker
// config.json: its auths, then its credHelpers and credsStore), then the
// plugin's auth.helper.

// officialIndexKey is the key of Docker Hub's credentials in config.json.
const officialIndexKey = "https://index.docker.io/v1/"

// helperPrefix is the name prefix of docker credential helpers.
const helperPrefix = "docker-credential-"

// dockerConfigFile is the part of a docker config.json about registries.
type dockerConfigFile struct {
	Auths       map[string]dockerConfigAuth `json:"auths"`
	CredHelpers map[string]string           `json:"credHelpers"`
	CredsStore  string                      `json:"credsStore"`
}

type dockerConfigAuth struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

// resolveAuth returns the credentials to pull the task's image with; nil
// means an anonymous pull.
func (d *Driver) resolveAuth(c taskConfig) (*registry.AuthConfig, error) {
	if a := c.auth; a != nil && (a.username != "" || a.password != "" || a.serverAddress != "") {
		return &registry.AuthConfig{Username: a.username, Password: a.password, ServerAddress: a.serverAddress}, nil
	}
	ref, err := reference.ParseNormalizedNamed(c.image)
	if err != nil {
		return nil, err
	}
	domain := reference.Domain(ref)
	key := domain
	if domain == "docker.io" || domain == "index.docker.io" {
		key = officialIndexKey
	}
	if d.cfg.AuthConfig != "" {
		auth, err := authFromConfigFile(d.cfg.AuthConfig, key, domain)
		if auth != nil || err != nil {
			return auth, err
		}
	}
	if d.cfg.AuthHelper != "" {
		return authFromHelper(d.cfg.AuthHelper, key)
	}
	return nil, nil
}

func authFromConfigFile(file, key, domain string) (*registry.AuthConfig, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("docker auth config %s: %w", file, err)
	}
	var cf dockerConfigFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return nil, fmt.Errorf("docker auth config %s: %w", file, err)
	}
	entry, ok := cf.Auths[key]
	if !ok {
		// Older files key registries by URL.
		for k, e := range cf.Auths {
			if hostOf(k) == hostOf(key) {
				entry, ok = e, true
				break
			}
		}
	}
	if ok {
		auth := &registry.AuthConfig{
			Username: entry.Username, Password: entry.Password, ServerAddress: domain,
			IdentityToken: entry.IdentityToken, RegistryToken: entry.RegistryToken,
		}
		if entry.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(entry.Auth)
			if err != nil {
				return nil, fmt.Errorf("docker auth config %s: auths[%q].auth is not base64: %w", file, key, err)
			}
			user, pass, found := strings.Cut(string(raw), ":")
			if !found {
				return nil, fmt.Errorf("docker auth config %s: auths[%q].auth is not \"user:password\"", file, key)
			}
			auth.Username, auth.Password = user, pass
		}
		if auth.Username != "" || auth.Password != "" || auth.IdentityToken != "" || auth.RegistryToken != "" {
			return auth, nil
		}
	}
	if h := cf.CredHelpers[key]; h != "" {
		return authFromHelper(h, key)
	}
	if cf.CredsStore != "" {
		return authFromHelper(cf.CredsStore, key)
	}
	return nil, nil
}

// authFromHelper asks docker-credential-<name> for the registry's
// credentials: the registry on stdin, {"Username", "Secret"} on stdout.
func authFromHelper(name, key string) (*registry.AuthConfig, error) {
	helper := helperPrefix + name
	cmd := exec.Command(helper, "get")
	cmd.Stdin = strings.NewReader(key)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("%s get %q failed: %s", helper, key, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, fmt.Errorf("%s: %w", helper, err)
	}
	var resp struct {
		Username string
		Secret   string
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("%s get %q: bad answer: %w", helper, key, err)
	}
	auth := &registry.AuthConfig{ServerAddress: key}
	// Helpers answer "<token>" as the user name for identity tokens.
	if resp.Username == "<token>" {
		auth.IdentityToken = resp.Secret
	} else {
		auth.Username, auth.Password = resp.Username, resp.Secret
	}
	return auth, nil
}

// hostOf strips a registry key's scheme and path.
func hostOf(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	host, _, _ := strings.Cut(k, "/")
	return host
}
