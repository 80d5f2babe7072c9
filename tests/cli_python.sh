#!/bin/sh
# The Python package (python/rotor, docs/python.md) against the CLI: its
# unittest suite, tests/python/, with the rotor and librotor.so of this
# build.  Skips with one line where python3 is absent, or where the library
# is not beside $ROTOR or is a sanitizer build (Python cannot load an ASan
# library without preloading the runtime).  Run by `make test` as
# `ROTOR=build/rotor sh tests/cli_python.sh`.
. "$(dirname "$0")/lib.sh"
# Debian's python3 first: it starts in 0.1 s where a pyenv shim takes over 1 s
PY=${PYTHON3:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3 || echo python3)
if ! "$PY" -c 'import ctypes, json, unittest' 2>/dev/null; then
    echo "cli_python.sh: skipped (no python3 with ctypes)"
    exit 0
fi
lib=$(dirname "$ROTOR")/librotor.so.0
if [ ! -f "$lib" ] || { command -v ldd >/dev/null && ldd "$lib" | grep -q asan; }; then
    echo "cli_python.sh: skipped (no plain librotor.so.0 beside $ROTOR; make build/librotor.so)"
    exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
if ROTOR_LIB=$lib ROTOR=$ROTOR PYTHONPATH="$here/../python" \
    "$PY" -m unittest discover -s "$here/python" -p 'test_*.py' >"$out" 2>"$err"; then ok
else bad "unittest: $(tail -30 "$err")"; fi
finish cli_python.sh
