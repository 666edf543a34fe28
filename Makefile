# nomadq build, test and demo targets. `make demo` and `make test` are the
# two commands a fresh machine needs (see README.md).

GO        ?= go
BIN       := bin/nomad
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')
# Every package runs under the race detector; -p 1 because several
# packages start servers and agents on loopback ports.
TEST_FLAGS := -count=1 -race -p 1 -timeout 20m

export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build test test-deps test-bench test-prometheus e2e-long fuzz demo bench compat fmt lint clean docs-test

all: build

build:
	@mkdir -p bin
	$(GO) build -o $(BIN) ./cmd/nomad

## test: lint, then every package's tests under the race detector (the
## product module's, then the tooling module's in scripts/, which the
## root's ./... does not reach), then the metrics against a real Prometheus.
test: lint test-deps
	GO=$(GO) ./scripts/test.sh $(TEST_FLAGS) ./...
	cd scripts && GO=$(GO) ./test.sh $(TEST_FLAGS) ./...
	$(MAKE) test-bench
	$(MAKE) test-prometheus

## docs-test: run what README.md and website/ show (commands, job files,
## agent configs) against a dev agent, or fail on a block not marked with
## why it cannot run (website/docstest; make test runs it too, in ./...).
docs-test:
	$(GO) test -count=1 -race -timeout 10m ./website/docstest/

## test-deps: what the tests need from Debian and a fresh machine lacks:
## docker.io and busybox-static for the docker driver's own test engine.
test-deps:
	./scripts/install-docker-test-deps.sh
	./scripts/install-ui-test-deps.sh

## test-bench: the scheduler, applier, state store and queue benchmarks,
## one iteration each: they must still run and their checks hold (no
## timing is asserted; make bench measures). Without -race, and the queue's
## at its smallest size, to stay cheap (about a minute).
BENCH_ONCE := -count=1 -run '^$$' -benchtime=1x -timeout 10m
test-bench:
	$(GO) test $(BENCH_ONCE) -bench . ./scheduler/ ./state/
	$(GO) test $(BENCH_ONCE) -bench '^Benchmark(PlanApply|BatchQueue_ReleaseLatency|BatchQueue_EndToEnd|RaftApplyJobRegister)$$' ./nomad/
	$(GO) test $(BENCH_ONCE) -bench '^BenchmarkEvalBrokerEnqueueDequeueAck$$' ./nomad/evalbroker/
	$(GO) test $(BENCH_ONCE) -bench '^Benchmark(Queue_Restore|Queue_EnqueueRelease|State_EnqueueRoute|Plan_FairBackfill|ReadCluster)$$/^1000$$' ./nomad/batchqueue/
	$(GO) test $(BENCH_ONCE) -bench '^BenchmarkHeap_PushPop$$/^fifo$$/^1000$$' ./nomad/batchqueue/

## test-prometheus: scrape a dev agent with a real Prometheus (installs
## Debian's prometheus package when missing).
test-prometheus:
	GO=$(GO) ./scripts/test-prometheus.sh

## e2e-long: the long scenarios (failover, soak, scale) plus every other test,
## then the official api module's suite (make compat).
e2e-long:
	NOMADQ_E2E_LONG=1 $(GO) test -count=1 -p 1 -timeout 60m ./...
	cd scripts && $(GO) test -count=1 -p 1 -timeout 60m ./...
	$(MAKE) compat

## fuzz: run each Go fuzz target for FUZZTIME (default 30s), one after
## another; a failing input is written to the package's
## testdata/fuzz/<Target>/ and from then on runs as part of make test
## (see website/reliability.md). FUZZTIME=5m make fuzz for a longer run.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./jobspec/:FuzzParse \
	./jobspec/:FuzzParseVars \
	./agent/:FuzzJobRegisterBody \
	./agent/:FuzzJobRegisterField \
	./agent/:FuzzSchedulerConfigBody \
	./nomad/fsm/:FuzzApply \
	./nomad/fsm/:FuzzApplyField \
	./structs/:FuzzJobValidate \
	./agent/config/:FuzzParse \
	./acl/:FuzzParse \
	./nomad/snapshot/nomadfmt/:FuzzRead
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

## demo: build bin/nomad and show what it does with the example jobs.
demo: build
	./scripts/demo.sh

## compat: run the official api module's own test suite against bin/nomad
## and print pass/fail per test family (see website/compat.md).
compat:
	GO=$(GO) ./scripts/compat.sh

## bench: measure the scheduler, applier, state store, restore, HTTP
## registration, max_run_duration lateness and the single-node drain (each
## the median of 3 runs) and write website/performance.md with its plot.
## The driver is built from its own module (scripts/go.mod) and run from
## the repo root: its paths and the `go test -bench ./scheduler/` runs it
## starts are relative to the root.
bench: build
	cd scripts && $(GO) build -o ../bin/bench ./bench
	bin/bench -bin $(BIN) -runs 3 -out website/performance.md

fmt:
	gofmt -w $(GOFILES)

## lint: fail on unformatted files and go vet findings.
lint:
	@unformatted="$$(gofmt -l $(GOFILES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd scripts && $(GO) vet ./...

clean:
	rm -rf bin
