#!/bin/sh
# The repository holds sources, not build products: no object, archive,
# dependency file or binary is tracked, and the build folders are ignored
# (issue 19: build-san/ with its binaries was committed).
# Run by `make test` as `sh tests/tree.sh`; outside a git checkout it skips.
. "$(dirname "$0")/lib.sh"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "tree: not a git checkout; skipped"
    exit 0
fi
tracked=$(git ls-files | grep -E '\.(o|a|d|so)$|^build[^/]*/' | head -n 5)
if [ -z "$tracked" ]; then ok; else bad "build products are tracked: $tracked"; fi
for d in build build-san build/san build/clang; do
    if git check-ignore -q "$d/x.o"; then ok; else bad "$d/ is not ignored"; fi
done
finish tree
