#!/bin/sh
# Backs up a Plinth cluster into a new folder while its nodes run: PostgreSQL's records with
# pg_dump (one snapshot of every record, the change log, the cluster's id and schema version) and
# every object of the bucket, each checked against its sha256. Bucket garbage collection waits
# while it runs, so every blob the records refer to is in the copy. backup.json, written last,
# marks the backup complete. Restore it with restore-cluster.sh.
#
# Usage: backup-cluster.sh [--settings FILE] [--keep N] DIR
#   --settings FILE  the nodes' settings (default: /etc/plinth/plinth.env, unless
#                    PLINTH_DATABASE_URL is already set); it reads PLINTH_DATABASE_URL,
#                    PLINTH_S3_* and AWS_*
#   --keep N         then delete all but the newest N complete backups in DIR's parent folder
#   DIR              a folder that does not exist yet, or is empty
#
# Run it on a machine with Plinth installed (this script in its deploy/ folder, the built files in
# dist/) and pg_dump of the server's major version or newer (Debian: postgresql-client), e.g.
# daily from cron: backup-cluster.sh --keep 7 /backups/plinth/$(date +%F)
# docs/operating.md, "Backups of a cluster".
set -eu

here=$(cd "$(dirname "$0")" && pwd)
plinth=$here/../dist/cli/plinth.js

# usage, use_settings (the nodes' settings file, loaded as systemd loads it).
. "$here/settings.sh"

settings=
keep=
while [ $# -gt 0 ]; do
  case $1 in
    --settings) [ $# -ge 2 ] || usage; settings=$2; shift 2 ;;
    --keep) [ $# -ge 2 ] || usage; keep=$2; shift 2 ;;
    -h | --help | -*) usage ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || usage
dir=$1
case $keep in '' | *[!0-9]* | 0) [ -z "$keep" ] || usage ;; esac

use_settings "$settings"
command -v pg_dump >/dev/null || { echo "backup-cluster.sh: pg_dump not found (Debian: apt-get install postgresql-client)" >&2; exit 1; }

node "$plinth" admin backup-cluster "$dir"

if [ -n "$keep" ]; then
  # Complete backups only (backup.json is written last), newest first.
  parent=$(cd "$(dirname "$dir")" && pwd)
  ls -1t "$parent"/*/backup.json 2>/dev/null | tail -n +"$((keep + 1))" | while IFS= read -r manifest; do
    old=$(dirname "$manifest")
    grep -q '"format": "plinth-cluster-backup"' "$manifest" || continue
    echo "backup-cluster.sh: deleting the older backup $old" >&2
    rm -rf -- "$old"
  done
fi
