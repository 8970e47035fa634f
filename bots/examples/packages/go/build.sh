#!/bin/sh
# The league's build of ./bot, offline: Go's caches and temporary files go to a scratch folder
# removed afterwards (in the build sandbox the working folder is also TMPDIR, and Go ignores a
# go.mod lying in the temporary folder itself).
scratch=$(mktemp -d) || exit 1
TMPDIR="$scratch" GOCACHE="$scratch/cache" GOPATH="$scratch/gopath" GOPROXY=off \
    go build -o bot .
status=$?
rm -rf "$scratch"
exit $status
