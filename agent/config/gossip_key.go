package config

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// checkGossipKey refuses a server.encrypt that the server's keyring would
// refuse at start: not base64, or not the 16, 24 or 32 bytes of an
// AES-128, AES-192 or AES-256 key (memberlist's sizes). The server's own
// decoder (nomad.DecodeGossipKey) says the same; this package must not
// import the server, and agent's TestValidate_GossipKeyAsTheServer keeps
// the two in step.
func checkGossipKey(key string) error {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return errors.New("the key is not valid base64: must be the base64 encoding of a 16, 24 or 32 byte key (nomad operator gossip keyring generate prints one)")
	}
	switch len(raw) {
	case 16, 24, 32:
		return nil
	}
	return fmt.Errorf("the key decodes to %d bytes: must be 16, 24 or 32 bytes (AES-128, AES-192 or AES-256)", len(raw))
}
