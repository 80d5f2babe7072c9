#!/bin/sh
# Checks that the Debian packages rotor builds with are installed.  As root it
# installs what is missing; otherwise it prints the exact apt-get line and fails.
# Usage: scripts/deps.sh [build|test]   (test also needs Criterion and libonnx-testdata,
# and would like chromium: tests/cli_report.sh loads the HTML reports in it, and
# skips that part, saying so, where chromium is absent; and OpenMPI, for
# tests/cli_explore_mpi.sh, likewise; so they are optional: installed as root
# when apt-get can, never a reason to fail)
set -u
want=${1:-build}
missing=""
optional=""
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
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || optional="$optional chromium"
    # rotor explore under mpirun (tests/cli_explore_mpi.sh skips without it); the
    # Makefile builds with MPI only where it finds it, so it is optional too
    command -v mpicc >/dev/null 2>&1 || optional="$optional libopenmpi-dev"
    command -v mpirun >/dev/null 2>&1 || optional="$optional openmpi-bin"
fi
if [ "${CC:-cc}" = clang ]; then
    command -v clang >/dev/null 2>&1 || missing="$missing clang"
    ls /usr/lib/llvm-*/lib/libomp.so >/dev/null 2>&1 || missing="$missing libomp-dev"
fi
[ -z "$missing" ] && [ -z "$optional" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "rotor: installing missing Debian packages:$missing$optional" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || true
    # shellcheck disable=SC2086
    if [ -n "$optional" ] && ! apt-get install -y -qq $optional >/dev/null; then
        echo "rotor: could not install$optional: tests/cli_report.sh will skip its browser test, tests/cli_explore_mpi.sh its mpirun runs" >&2
    fi
    [ -z "$missing" ] && exit 0
    # shellcheck disable=SC2086
    if apt-get install -y -qq $missing >/dev/null; then exit 0; fi
    echo "rotor: apt-get install failed" >&2
    exit 1
fi
if [ -z "$missing" ]; then
    echo "rotor: optional:$optional is not installed (tests/cli_report.sh skips its browser test, tests/cli_explore_mpi.sh its mpirun runs); install with:" >&2
    echo "  sudo apt-get install -y$optional" >&2
    exit 0
fi
echo "rotor: missing Debian packages; install them with:" >&2
echo "  sudo apt-get install -y$missing" >&2
exit 1
