#!/bin/sh
# A user's first runs (issue 19; docs/build.md):
#  - the Criterion suite passes where ../shared/onnx is absent, skipping the
#    tests of its files (it once exited 1 after passing them all);
#  - make can plan the generated ONNX code before the schema is installed (it
#    once stopped with "No rule to make target .../onnx.proto" before deps ran).
# Run by `make test` as `TESTS=build/test_rotor sh tests/fresh.sh`.
. "$(dirname "$0")/lib.sh"
TESTS=${TESTS:-build/test_rotor}
root=$(pwd)

mkdir -p "$tmpdir/a/b"
(cd "$tmpdir/a/b" && "$root/$TESTS" --filter 'onnx/*' >"$out" 2>&1)
if [ $? -eq 0 ] && grep -q "Failing: 0" "$out"; then ok; else bad "onnx tests without ../shared: $(tail -n 3 "$out")"; fi

make -n --no-print-directory ONNX_PROTO=/nonexistent/onnx.proto BUILD="$tmpdir/build" \
    "$tmpdir/build/gen/onnx.pb-c.h" >"$out" 2>&1
if [ $? -eq 0 ] && grep -q "deps.sh build" "$out" && grep -q "protoc-c" "$out"; then ok
else bad "make before the schema exists: $(tail -n 3 "$out")"; fi

finish fresh
