#!/bin/sh
# Checks that the Debian packages rotor builds with are installed.  As root it
# installs what is missing; otherwise it prints the exact apt-get line and fails.
# Usage: scripts/deps.sh [build|test]   (test also needs Criterion and libonnx-testdata)
set -u
want=${1:-build}
missing=""
have_header() { [ -f "/usr/include/$1" ]; }
have_header cjson/cJSON.h || missing="$missing libcjson-dev"
have_header protobuf-c/protobuf-c.h || missing="$missing libprotobuf-c-dev"
command -v protoc-c >/dev/null 2>&1 || missing="$missing protobuf-c-compiler"
have_header onnx/onnx.proto || missing="$missing libonnx-dev"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if [ "$want" = test ]; then
    have_header criterion/criterion.h || missing="$missing libcriterion-dev"
    # tests/cli_model.sh sweeps the ONNX operator test models
    [ -d /usr/share/libonnx-testdata/data ] || missing="$missing libonnx-testdata"
fi
if [ "${CC:-cc}" = clang ]; then
    command -v clang >/dev/null 2>&1 || missing="$missing clang"
    ls /usr/lib/llvm-*/lib/libomp.so >/dev/null 2>&1 || missing="$missing libomp-dev"
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "rotor: installing missing Debian packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || true
    # shellcheck disable=SC2086
    if apt-get install -y -qq $missing >/dev/null; then exit 0; fi
    echo "rotor: apt-get install failed" >&2
    exit 1
fi
echo "rotor: missing Debian packages; install them with:" >&2
echo "  sudo apt-get install -y$missing" >&2
exit 1
