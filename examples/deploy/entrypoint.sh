#!/bin/sh
# Entry point of the Treadle image (examples/deploy/Dockerfile): runs one `treadle` command.
#
#   treadle-entrypoint                 treadle serve
#   treadle-entrypoint serve ARGS...   treadle serve ARGS... (TREADLE_* variables configure it)
#   treadle-entrypoint health          treadle health against this container's own server
#   treadle-entrypoint migrate         treadle migrate (the store of TREADLE_DATABASE_URL or _DATA_DIR)
#   treadle-entrypoint COMMAND ARGS... any other treadle command
#
# `exec`, so that treadle gets the container's SIGTERM itself and drains its runs (TREADLE_GRACE).
set -eu

if [ "$#" -eq 0 ]; then
  set -- serve
fi

case "$1" in
  health)
    # A probe asks the server in this container: the port of TREADLE_LISTEN, over loopback.
    shift
    port="${TREADLE_LISTEN:-127.0.0.1:50051}"
    port="${port##*:}"
    exec treadle health --target "127.0.0.1:${port}" "$@"
    ;;
  -*)
    # Options only: they are serve's.
    exec treadle serve "$@"
    ;;
  *)
    exec treadle "$@"
    ;;
esac
