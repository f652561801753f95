"""The plugin's launcher (plugin/bin/brain): how the plugin's hooks and MCP servers run
`brain` without running one the repository holds. Codex starts a plugin's MCP server without
expanding the plugin's folder in its file, so its server runs this script inline
(`/bin/sh -c SCRIPT`); the others run the file. tests/test_plugin.py keeps the file equal to
SCRIPT."""

SCRIPT = r"""#!/bin/sh
# pybrain's plugin (Claude Code, Codex, Cursor) runs `brain` through this launcher. It runs a
# `brain` outside the repository the session works in, never one the repository holds:
# BRAIN_COMMAND when it is an absolute path outside the repository; else `brain` in a folder
# of PATH that is absolute and outside it (an empty, `.` or other relative entry is skipped,
# and so is an entry under the repository, such as its node_modules/.bin, or one that
# reaches it through a link or /proc/self/cwd); else where the README's install from a
# clone (~/.pybrain), pipx, uv and pip --user put it. The repository is the nearest folder
# upward from the working folder that holds .git (else the working folder itself; never
# HOME or a folder above it). Only shell builtins run here: no other command is looked up
# on PATH, no PATH entry is expanded as a glob, and `brain` gets PATH without the skipped
# entries.
set -f
unset CDPATH
unset IFS
real_dir() {
    # the physical folder $1 names (links and /proc/self/cwd resolved); fails when it is none
    (cd -P "$1" 2>/dev/null && pwd -P)
}
here=$(pwd -P 2>/dev/null) || here=""
repo=""
dir=$here
while [ -n "$dir" ]; do
    if [ -e "$dir/.git" ]; then
        repo=$dir
        break
    fi
    dir=${dir%/*}
done
[ -n "$repo" ] || repo=$here
[ "$repo" != / ] || repo=""
home=""
[ -n "${HOME:-}" ] && home=$(real_dir "$HOME")
case "$home/" in
    "$repo"/*) repo="" ;;  # HOME or above it (also /): the user's own, not a repository's
esac
inside() {
    [ -n "$repo" ] || return 1
    case "$1/" in
        "$repo"/*) return 0 ;;
    esac
    return 1
}
case $0 in
    */*) self="$(real_dir "${0%/*}")/${0##*/}" ;;
    *) self="" ;;
esac
found=""
skipped=""
kept=""
if [ -n "${BRAIN_COMMAND:-}" ]; then
    case $BRAIN_COMMAND in
        /*)
            folder=${BRAIN_COMMAND%/*}
            real=$(real_dir "${folder:-/}")
            if [ -z "$real" ]; then
                skipped="BRAIN_COMMAND=$BRAIN_COMMAND (no such folder)"
            elif inside "$real"; then
                skipped="BRAIN_COMMAND=$BRAIN_COMMAND (inside the repository $repo)"
            else
                found=$BRAIN_COMMAND
            fi
            ;;
        *) skipped="BRAIN_COMMAND=$BRAIN_COMMAND (not an absolute path)" ;;
    esac
    if [ -z "$found" ]; then
        echo "pybrain plugin: not run: $skipped; set BRAIN_COMMAND to the absolute path" \
            "of an installed brain outside the repository" >&2
        if [ "${1:-}" = hook ]; then exit 0; fi
        exit 127
    fi
fi
old_ifs=$IFS
IFS=:
for dir in ${PATH:-}; do
    IFS=$old_ifs
    case $dir in
        /*) ;;
        *)
            skipped="$skipped${skipped:+, }'$dir' (relative)"
            continue
            ;;
    esac
    real=$(real_dir "$dir")
    [ -n "$real" ] || continue
    if inside "$real"; then
        skipped="$skipped${skipped:+, }$dir (inside the repository $repo)"
        continue
    fi
    kept="$kept${kept:+:}$dir"
    candidate="$dir/brain"
    if [ -z "$found" ] && [ -f "$candidate" ] && [ -x "$candidate" ] && [ "$real/brain" != "$self" ]; then
        found=$candidate
    fi
done
IFS=$old_ifs
if [ -z "$found" ]; then
    for candidate in "$HOME/.pybrain/bin/brain" "$HOME/.local/bin/brain" \
        "$HOME/.local/share/pipx/venvs/pybrain-memory/bin/brain" \
        /usr/local/bin/brain /opt/homebrew/bin/brain; do
        case $candidate in
            /*) ;;
            *) continue ;;
        esac
        if [ -f "$candidate" ] && [ -x "$candidate" ]; then
            found=$candidate
            break
        fi
    done
fi
if [ -n "$found" ]; then
    PATH=${kept:-/usr/bin:/bin}
    export PATH
    exec "$found" "$@"
fi
echo "pybrain plugin: no brain command found${skipped:+ (skipped: $skipped)};" \
    "install pybrain as its README says (a wheel built from a clone into ~/.pybrain)," \
    "or set BRAIN_COMMAND to its brain" >&2
# A hook never fails the session; anything else says it could not run.
if [ "${1:-}" = hook ]; then exit 0; fi
exit 127
"""
