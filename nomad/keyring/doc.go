// Package keyring holds what the server does with its root keys: it
// generates them, keeps their parsed signing keys, signs workload
// identities (a plan's placements, on the worker ahead of the plan
// applier and on the applier for what is left) and other tokens, seals
// and opens variables with AES-256-GCM, and picks the next prepublished
// key to activate.
//
// Root keys live in the replicated state; this package reads them from a
// store or snapshot it is given. It must not write them or know about
// Raft: the server commits new keys and drives rotation and publication.
package keyring
