package command

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

const paramJobHCL = `
job "work" {
  type        = "batch"
  datacenters = ["*"]
  parameterized {
    payload       = "required"
    meta_required = ["n"]
  }
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "test \"$(cat $NOMAD_TASK_DIR/in.txt)\" = \"payload-$NOMAD_META_n\""]
      }
      dispatch_payload {
        file = "in.txt"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

const periodicJobHCL = `
job "yearly" {
  type        = "batch"
  datacenters = ["*"]
  periodic {
    crons            = ["0 0 1 1 *"]
    prohibit_overlap = true
  }
  group "g" {
    task "main" {
      driver = "mock_driver"
      config {
        run_for = "10ms"
      }
    }
  }
}
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	must.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestCLIDispatchAndPeriodic(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	dir := t.TempDir()

	code, _, errOut := cli(t, addr, "job", "run", writeFile(t, dir, "work.nomad.hcl", paramJobHCL))
	must.Eq(t, 0, code, must.Sprint(errOut))

	t.Run("dispatch from a file", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "dispatch", "-meta", "n=1", "work", writeFile(t, dir, "p1", "payload-1"))
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.RegexMatch(t, regexp.MustCompile(`Dispatched Job ID = work/dispatch-\d+-[0-9a-f]{8}`), out)
		must.StrContains(t, out, `finished with status "complete"`, must.Sprint(out))
	})
	t.Run("dispatch from stdin", func(t *testing.T) {
		code, out, errOut := run(t, "payload-2", "job", "dispatch", "-address", addr, "-detach", "-meta", "n=2", "work", "-")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Dispatched Job ID = work/dispatch-")
	})
	t.Run("dispatch validation error", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "job", "dispatch", "work", writeFile(t, dir, "p3", "x"))
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Dispatch did not provide required meta keys: [n]")
	})
	t.Run("dispatch idempotency token", func(t *testing.T) {
		p := writeFile(t, dir, "p4", "payload-4")
		_, first, _ := cli(t, addr, "job", "dispatch", "-detach", "-idempotency-token", "t1", "-meta", "n=4", "work", p)
		_, again, _ := cli(t, addr, "job", "dispatch", "-detach", "-idempotency-token", "t1", "-meta", "n=4", "work", p)
		id := regexp.MustCompile(`work/dispatch-\S+`)
		must.Eq(t, id.FindString(first), id.FindString(again))
	})
	t.Run("status of a parameterized parent", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "status", "work")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Parameterized Job\n")
		must.StrContains(t, out, "Required Metadata = n")
		must.StrContains(t, out, "Parameterized Job Summary\n")
		must.StrContains(t, out, "Dispatched Jobs\n")
		must.RegexMatch(t, regexp.MustCompile(`work/dispatch-\S+ +(pending|running|dead)`), out)
		must.StrNotContains(t, out, "Allocations")
	})

	code, out, errOut := cli(t, addr, "job", "run", writeFile(t, dir, "yearly.nomad.hcl", periodicJobHCL))
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`Job registration successful\nApproximate next launch time: \d{4}-01-01T00:00:00Z \(\S+ from now\)`), out)
	t.Run("status of a periodic parent", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "status", "yearly")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.RegexMatch(t, regexp.MustCompile(`Next Periodic Launch = \d{4}-01-01T00:00:00Z \(\S+ from now\)`), out)
		must.StrContains(t, out, "Children Job Summary\n")
		must.StrContains(t, out, "No instances of periodic job found")
	})
	t.Run("periodic force", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "periodic", "force", "yearly")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `Evaluation triggered by job "yearly/periodic-`)
		code, out, errOut = cli(t, addr, "job", "status", "yearly")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Previously Launched Jobs\n")
		must.RegexMatch(t, regexp.MustCompile(`yearly/periodic-\d+ +(pending|running|dead)`), out)
	})
	t.Run("periodic force of a non-periodic job", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "job", "periodic", "force", "work")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `Job "work" is not periodic`)
	})
}
