package structs

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// AllocName returns the name of the idx-th allocation of a group:
// "<job>.<group>[<idx>]".
func AllocName(job, group string, idx uint) string {
	return job + "." + group + "[" + strconv.FormatUint(uint64(idx), 10) + "]"
}

// GenerateUUID returns 16 random bytes from crypto/rand formatted as
// 8-4-4-4-12 lowercase hex, the form of every ID in the cluster.
func GenerateUUID() string {
	var b [16]byte
	// crypto/rand.Read never fails; it crashes the program if the system
	// has no randomness to give.
	_, _ = rand.Read(b[:])
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}
