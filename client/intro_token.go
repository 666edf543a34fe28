package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// introTokenFile is where, in the client's state directory, an operator
// may leave the introduction token, as in Nomad.
const introTokenFile = "intro_token.jwt"

// readIntroToken returns the introduction token in stateDir's
// intro_token.jwt, "" when there is no such file.
func readIntroToken(stateDir string) (string, error) {
	root, err := os.OpenRoot(stateDir)
	if err != nil {
		return "", fmt.Errorf("client: intro token: %w", err)
	}
	defer root.Close()
	fi, err := root.Stat(introTokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("client: intro token file: %w", err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("client: intro token file %s is a directory", introTokenFile)
	}
	b, err := root.ReadFile(introTokenFile)
	if err != nil {
		return "", fmt.Errorf("client: intro token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
