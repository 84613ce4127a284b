# okf — make targets. `make demo` and `make test` work on a fresh machine
# with Go 1.26 (and PostgreSQL 15 binaries for the database tests).

GO      ?= go
BIN     := bin/okf
DEMO    := .demo

.PHONY: all build demo test vet fmt-check bench bench-peers fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/okf

# The whole job on the embedded defaults (okf demo): build the example shop
# database, compile and validate its bundle, store it, show the context packs
# of its questions against the raw docs, run a guarded query and a refused
# attack, then ask a configured model, or say how to connect one. Go prints
# nothing while it compiles, and a first build takes minutes: say so first.
demo:
	@echo "make demo: compiling okf into $(BIN); with an empty Go build cache this takes 1 to 3 minutes on 2 cores (seconds once cached)"
	$(GO) build -o $(BIN) ./cmd/okf
	$(BIN) demo --dir $(DEMO)

test: fmt-check vet
	$(GO) test ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# okf against its peers, whole processes side by side (issue 17): builds
# the peers of ../shared/peers that build offline and prints a markdown
# table of medians and ratios (BENCHMARKS.md records it). RUNS=20 for more.
bench-peers:
	scripts/bench-peers --runs $(or $(RUNS),10)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 60s ./sqlguard/
	$(GO) test -run '^$$' -fuzz FuzzScanSQL -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzSimpleYAML -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzReadsAs -fuzztime 30s ./internal/yamlplain/
	$(GO) test -run '^$$' -fuzz FuzzSameTrees -fuzztime 60s ./internal/pgast/
	$(GO) test -run '^$$' -fuzz FuzzStreams -fuzztime 60s ./llm/

clean:
	rm -rf bin $(DEMO)
