#!/bin/sh
# Sourced by backup-cluster.sh and restore-cluster.sh (". settings.sh"), never run on its own:
# their usage text and the nodes' settings, read the one way both need.

# The "# Usage:" block at the top of the script that sourced this file, on standard error.
usage() {
  sed -n '/^# Usage:/,/^#   DIR/s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

# KEY=value lines as systemd's EnvironmentFile reads them (comments, optional double quotes),
# exported without the shell interpreting the values: a password may hold any character.
load_settings() {
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in '' | '#'* | ';'*) continue ;; esac
    key=${line%%=*}
    value=${line#*=}
    case $value in \"*\") value=${value#\"}; value=${value%\"} ;; esac
    export "$key=$value"
  done <"$1"
}

# The file --settings named, else /etc/plinth/plinth.env unless PLINTH_DATABASE_URL is already
# set (then the environment holds the settings and no file is read).
use_settings() {
  file=$1
  if [ -z "$file" ] && [ -z "${PLINTH_DATABASE_URL:-}" ]; then file=/etc/plinth/plinth.env; fi
  [ -n "$file" ] || return 0
  [ -r "$file" ] || { echo "$(basename "$0"): cannot read $file" >&2; exit 1; }
  load_settings "$file"
}
