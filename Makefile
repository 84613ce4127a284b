# okf — make targets. `make demo` and `make test` work on a fresh machine
# with Go 1.26 (and PostgreSQL 15 binaries for the database tests).

GO      ?= go
BIN     := bin/okf
DEMO    := .demo

.PHONY: all build demo test vet fmt-check bench fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/okf

# The main job on the embedded defaults: compile the example shop database's
# documentation into an OKF bundle, validate it strictly, keep it in an
# embedded store, and show what an agent would read for a question.
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BIN) compile examples/shop --out $(DEMO)/bundles --generated-at 2026-01-01T00:00:00Z
	$(BIN) validate --strict $(DEMO)/bundles/shop
	$(BIN) import $(DEMO)/bundles --data $(DEMO)/data
	$(BIN) search --data $(DEMO)/data -k 3 "active customer"
	$(BIN) context --data $(DEMO)/data --budget 800 "Which active customers are not high-value customers?"

test: fmt-check vet
	$(GO) test ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s .

clean:
	rm -rf bin $(DEMO)
