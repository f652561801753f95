#!/usr/bin/env bash
# The README's demo: a fresh embedded database, a remember, a rejected
# duplicate, a supersede, a recall and a search. Run by `make demo`.
set -euo pipefail

BRAIN="${BRAIN:-.venv/bin/brain}"
# A folder of its own every time (DEMO_HOME: one you name, new or empty), so the output is
# always the same and nothing of another run, or of anyone else's, is removed.
if [ -n "${DEMO_HOME:-}" ]; then
    if [ -e "$DEMO_HOME" ] && [ -n "$(ls -A "$DEMO_HOME")" ]; then
        echo "DEMO_HOME=$DEMO_HOME is not empty: name a new or empty folder" >&2
        exit 2
    fi
    mkdir -p "$DEMO_HOME"
    export BRAIN_HOME="$DEMO_HOME"
else
    BRAIN_HOME="$(mktemp -d "${TMPDIR:-/tmp}/pybrain-demo.XXXXXX")"
    export BRAIN_HOME
fi

show() {
    local shown="" arg
    for arg in "$@"; do
        case "$arg" in *[[:space:]]*) shown+=" \"$arg\"" ;; *) shown+=" $arg" ;; esac
    done
    printf '\n$ brain%s\n' "$shown"
    "$BRAIN" "$@" || true
}

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
printf 'Use it:  export BRAIN_HOME=%s   stop it:  BRAIN_HOME=%s %s db stop   then: rm -r %s\n' \
    "$BRAIN_HOME" "$BRAIN_HOME" "$BRAIN" "$BRAIN_HOME"
