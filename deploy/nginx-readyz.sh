#!/bin/sh
# Keeps nginx's list of Plinth nodes to those that can serve. Open-source nginx only notices a
# node that refuses connections; a node whose disk is full or whose replica has stalled still
# accepts them, and would serve visitors stale sites. This asks each node's operator listener
# (GET /readyz) every few seconds, writes the upstream's `server` lines (an unready node's marked
# `down`) into the file nginx-plinth.conf includes, and reloads nginx when they change.
#
# Usage: nginx-readyz.sh [--once] [--interval SECONDS] [--reload COMMAND] NODES OUT
#   NODES    one node a line: the address visitors reach it at, then its operator listener
#            (PLINTH_LISTEN_HOST:PLINTH_PORT PLINTH_OPS_HOST:PLINTH_OPS_PORT), e.g.
#            10.0.0.11:8000 10.0.0.11:9100      (# starts a comment)
#   OUT      the file of server lines, e.g. /etc/nginx/plinth-nodes.conf
#   --once   check once, write OUT, and exit (to write it before nginx starts)
#   --interval SECONDS  between checks (default 5)
#   --reload COMMAND    how to make nginx read OUT again (default: nginx -s reload)
#
# A node is ready when /readyz answers 200 within 2 s. If no node is ready, every node is
# listed as up: a node that serves what it has beats none. Needs curl. deploy/nginx-readyz.service
# runs it; docs/operating.md, "Shipped files".
set -eu

usage() {
  sed -n '/^# Usage:/,/^#   --reload/s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

once=
interval=5
reload='nginx -s reload'
while [ $# -gt 0 ]; do
  case $1 in
    --once) once=1; shift ;;
    --interval) [ $# -ge 2 ] || usage; interval=$2; shift 2 ;;
    --reload) [ $# -ge 2 ] || usage; reload=$2; shift 2 ;;
    -h | --help | -*) usage ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || usage
nodes=$1
out=$2
case $interval in '' | *[!0-9]* | 0) usage ;; esac
command -v curl >/dev/null || { echo "nginx-readyz.sh: curl not found (Debian: apt-get install curl)" >&2; exit 1; }

# The server lines for the nodes as they are now, on standard output.
servers() {
  ready=0
  lines=
  while read -r node ops rest; do
    case $node in '' | '#'*) continue ;; esac
    [ -n "$ops" ] || { echo "nginx-readyz.sh: $nodes: no operator listener after $node" >&2; exit 1; }
    if curl -fsS -o /dev/null -m 2 "http://$ops/readyz" 2>/dev/null; then
      state=
      ready=$((ready + 1))
    else
      state=' down'
    fi
    lines="$lines$node$state
"
  done <"$nodes"
  [ -n "$lines" ] || { echo "nginx-readyz.sh: $nodes lists no node" >&2; exit 1; }
  printf '%s' "$lines" | while read -r node state; do
    [ "$ready" -gt 0 ] || state=
    echo "server $node max_fails=1 fail_timeout=10s${state:+ $state};"
  done
}

while :; do
  next=$(servers)
  if [ ! -f "$out" ] || [ "$next" != "$(cat "$out")" ]; then
    printf '%s\n' "$next" >"$out.tmp"
    mv "$out.tmp" "$out"
    echo "nginx-readyz.sh: $(echo "$next" | grep -c ' down;' || true) of $(echo "$next" | wc -l) node(s) down" >&2
    [ -n "$once" ] || sh -c "$reload" || echo "nginx-readyz.sh: $reload failed" >&2
  fi
  [ -z "$once" ] || exit 0
  sleep "$interval"
done
