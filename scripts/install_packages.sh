#!/usr/bin/env bash
# Installs Debian packages a test needs when its commands are not there yet.
#   install_packages.sh "<what needs them>" <command,command,...> <package>...
# e.g. install_packages.sh "The HTML report test" chromium,chromedriver chromium chromium-driver
# Needs root or sudo; prints what to do otherwise.
set -euo pipefail

what=$1
commands=$2
shift 2
missing=0
for command in ${commands//,/ }; do
    # Some live in /usr/sbin, which a user's PATH may lack.
    if ! command -v "$command" >/dev/null && [ ! -x "/usr/sbin/$command" ]; then
        missing=1
    fi
done
if [ "$missing" = 0 ]; then
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    run=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    run=(sudo -n)
else
    echo "lakecompat: $what needs Debian's $*. Install them as root with:" >&2
    echo "    apt-get install -y $*" >&2
    exit 1
fi
echo "Installing Debian's $* for ${what,}..."
export DEBIAN_FRONTEND=noninteractive
log=/tmp/lakecompat-apt.log
if ! "${run[@]}" apt-get install -y --no-install-recommends "$@" >"$log" 2>&1; then
    # A fresh machine may have no package lists yet.
    "${run[@]}" apt-get update >>"$log" 2>&1
    "${run[@]}" apt-get install -y --no-install-recommends "$@" >>"$log" 2>&1 || {
        echo "lakecompat: installing $* failed; see $log" >&2
        exit 1
    }
fi
