#!/usr/bin/env bash
# The main job behind `make run`: drives built-in null devices through a
# ring and prints what happened.  (The report issue grows this into the
# seed suite.)
set -euo pipefail
O=${1:-build}
exec "$O/examples/null-randread"
