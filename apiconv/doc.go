// Package apiconv maps a job from the wire types of Nomad's official client
// (github.com/hashicorp/nomad/api) to nomadq's internal model (structs).
//
// It sits between the two so that structs never imports the api module:
// only agent (the /v1 HTTP API) and command (the CLI, which checks a job
// file before sending it) convert. There is one mapping function per api
// type, in the file named after the concept. The reverse direction,
// structs to api, is needed only by tests and lives in to_api_test.go.
package apiconv
