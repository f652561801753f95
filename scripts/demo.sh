#!/usr/bin/env bash
# The README's demo: a fresh embedded database, a remember, a rejected
# duplicate, a supersede, a recall and a search. Run by `make demo`.
set -euo pipefail

BRAIN="${BRAIN:-.venv/bin/brain}"
export BRAIN_HOME="${DEMO_HOME:-/tmp/pybrain-demo}"

show() {
    local shown="" arg
    for arg in "$@"; do
        case "$arg" in *[[:space:]]*) shown+=" \"$arg\"" ;; *) shown+=" $arg" ;; esac
    done
    printf '\n$ brain%s\n' "$shown"
    "$BRAIN" "$@" || true
}

# A fresh demo database every time, so the output is always the same.
"$BRAIN" db stop >/dev/null 2>&1 || true
rm -rf "$BRAIN_HOME"

show db start
show init
show remember rule "Never force-push to main" \
    "Rewriting shared history breaks every clone; revert instead." --severity BLOCKER
show remember fact "API tokens expire after 24 hours" \
    "The auth service issues them; clients renew through /token/refresh."
show remember fact "API tokens are valid for one day" \
    "Clients must renew their tokens daily."
show supersede 2 "API tokens expire after 12 hours" \
    "Shortened after the security review; clients renew through /token/refresh." \
    --reason "security review halved the token lifetime"
show recall 2
show recall 3
show search "how long are api tokens valid"

printf '\nThe demo database keeps running in %s.\n' "$BRAIN_HOME"
printf 'Use it:  export BRAIN_HOME=%s   stop it:  BRAIN_HOME=%s %s db stop\n' \
    "$BRAIN_HOME" "$BRAIN_HOME" "$BRAIN"
