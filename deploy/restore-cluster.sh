#!/bin/sh
# Restores a Plinth cluster from a folder that backup-cluster.sh wrote: checks every file of it
# against backup.json, puts back the objects the bucket lacks, then replaces the records in
# PostgreSQL with the backup's in one transaction (pg_restore --clean). Every node, and any
# plinth admin, must be stopped first: it refuses while anything else is connected to the
# database. Then start the nodes; a node whose replica is ahead of the restored records rebuilds
# it at start-up.
#
# Usage: restore-cluster.sh [--settings FILE] DIR
#   --settings FILE  the nodes' settings (default: /etc/plinth/plinth.env, unless
#                    PLINTH_DATABASE_URL is already set); it reads PLINTH_DATABASE_URL,
#                    PLINTH_S3_* and AWS_*
#   DIR              a complete backup
#
# The database and bucket may be the ones backed up, or new, empty ones (then give the nodes
# their names). Needs pg_restore of the backup's pg_dump version or newer (Debian:
# postgresql-client). docs/operating.md, "Backups of a cluster".
set -eu

here=$(cd "$(dirname "$0")" && pwd)
plinth=$here/../dist/cli/plinth.js

# usage, use_settings (the nodes' settings file, loaded as systemd loads it).
. "$here/settings.sh"

settings=
while [ $# -gt 0 ]; do
  case $1 in
    --settings) [ $# -ge 2 ] || usage; settings=$2; shift 2 ;;
    -h | --help | -*) usage ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || usage
dir=$1

use_settings "$settings"
command -v pg_restore >/dev/null || { echo "restore-cluster.sh: pg_restore not found (Debian: apt-get install postgresql-client)" >&2; exit 1; }

exec node "$plinth" admin restore-cluster "$dir"
