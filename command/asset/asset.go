// Package asset holds the files the CLI writes out, such as the example
// job of "nomad job init".
package asset

import _ "embed"

// JobExample is the commented example job "nomad job init" writes.
//
//go:embed example.nomad.hcl
var JobExample []byte

// JobExampleShort is the example job without comments (-short).
//
//go:embed example-short.nomad.hcl
var JobExampleShort []byte
