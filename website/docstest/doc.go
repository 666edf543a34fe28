// Package docstest runs what the documentation shows. Its test walks
// README.md and every page under website/, takes each fenced code block
// and either runs it against a dev agent (shell commands, job files,
// agent configuration files, JSON bodies) or finds the page's marker
// saying why it is not run here. A block that is neither fails the test,
// so a page cannot show a command nobody has run.
//
// The markers are HTML comments on the lines right before a fence (blank
// lines between are allowed), one directive each or several separated by
// ";" (setup, after and sub take the rest of their comment):
//
//	<!-- docs-test: skip (why it cannot run here) -->
//	<!-- docs-test: file reader.hcl -->   save the block for later commands
//	<!-- docs-test: output -->            compare the printed output loosely
//	<!-- docs-test: exit 1 -->            the last command exits 1
//	<!-- docs-test: exits 0 1 0 -->       each command's exit code
//	<!-- docs-test: usage -->             a synopsis: `nomad <command> -h` must work
//	<!-- docs-test: acl -->               run against the agent with ACLs on
//	<!-- docs-test: setup CMD -->         run CMD, unshown, before the block
//	<!-- docs-test: after CMD -->         run CMD, unshown, after the block
//	<!-- docs-test: sub 3f1c CMD -->      3f1c in commands stands for what CMD prints
//
// website/README.md describes them for page writers.
package docstest
