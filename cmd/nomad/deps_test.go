package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// testingImporters are the packages outside this module allowed to bring
// the testing package into the binary: hashicorp/raft ships its in-memory
// test transport and store in a non-test file, hashicorp/go-getter its
// decompressor test helper (decompress_testing.go), and go-kms-wrapping's
// aead package (the root key wrapping of Nomad's snapshots) its test
// wrapper constructor (testing.go).
var testingImporters = []string{
	"github.com/hashicorp/raft", "github.com/hashicorp/go-getter/v2", "github.com/hashicorp/go-kms-wrapping/v2/aead",
}

// TestBinaryDeps_NoTesting checks that test helpers stay out of the nomad
// binary: no package it links imports testing (or testing/...) except the
// listed third-party ones, so a helper file without the _test suffix fails
// here.
func TestBinaryDeps_NoTesting(t *testing.T) {
	goTool, err := exec.LookPath("go")
	must.NoError(t, err)
	out, err := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	must.NoError(t, err)
	var offenders []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if slices.Contains(testingImporters, pkg) || strings.HasPrefix(pkg, "testing") {
			continue
		}
		if slices.ContainsFunc(imports, func(imp string) bool { return imp == "testing" || strings.HasPrefix(imp, "testing/") }) {
			offenders = append(offenders, pkg)
		}
	}
	must.SliceEmpty(t, offenders, must.Sprint("packages linked into cmd/nomad that import testing"))
}

// TestBinaryDeps_CLILibraries checks that the binary's CLI is built on the
// libraries Nomad's is: hashicorp/cli dispatches and prints help,
// posener/complete answers shell completion, columnize lays out tables.
func TestBinaryDeps_CLILibraries(t *testing.T) {
	goTool, err := exec.LookPath("go")
	must.NoError(t, err)
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	must.NoError(t, err)
	deps := strings.Fields(string(out))
	for _, want := range []string{"github.com/hashicorp/cli", "github.com/posener/complete", "github.com/ryanuber/columnize"} {
		must.SliceContains(t, deps, want)
	}
}
