package structs

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// DecodeGossipKey decodes a base64 gossip key (server.encrypt, a keyring
// install) and checks it is an AES-128, AES-192 or AES-256 key: 16, 24 or
// 32 bytes, the sizes memberlist takes. The agent's config check and the
// server's keyring both use it, so an agent never starts with a key its
// server then refuses. The error never repeats the key: it is a secret.
func DecodeGossipKey(key string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, errors.New("the key is not valid base64: must be the base64 encoding of a 16, 24 or 32 byte key (nomad operator gossip keyring generate prints one)")
	}
	switch len(raw) {
	case 16, 24, 32:
		return raw, nil
	}
	return nil, fmt.Errorf("the key decodes to %d bytes: must be 16, 24 or 32 bytes (AES-128, AES-192 or AES-256)", len(raw))
}
