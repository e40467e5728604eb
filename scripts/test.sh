#!/usr/bin/env bash
# Runs every test of svc: formatting, vet, the race-enabled test suite, and a
# short run of each fuzz target. This is the README's test command; .ci/run
# calls it after starting the services the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -count=1 ./...

# Fuzz targets: a short run each (FUZZTIME=0 skips them). The budget is a
# count of executions, not a duration: with a duration, Go 1.26's fuzzing
# coordinator can fail a target with a bare "context deadline exceeded" at
# the deadline on a loaded machine (go.dev/issue/75804, fixed in Go 1.27).
fuzztime=${FUZZTIME:-50000x}
if [ "$fuzztime" != "0" ]; then
	for target in \
		"./internal/workflow FuzzParse" \
		"./internal/workflow FuzzValidate" \
		"./internal/expr FuzzEval" \
		"./internal/engine FuzzRun" \
		"./internal/value FuzzAppendJSON" \
		"./internal/httpapi FuzzBearer" \
		"./internal/httpapi FuzzIfMatch" \
		"./internal/httpapi FuzzClientAddr" \
		"./internal/secret FuzzOpen" \
		"./internal/schedule FuzzParseCron" \
		"./internal/nodes/database FuzzCheckSQL"; do
		set -- $target
		go test -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" "$1"
	done
fi
