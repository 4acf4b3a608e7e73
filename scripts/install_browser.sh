#!/usr/bin/env bash
# Installs the headless browser the HTML-report test uses (Debian packages chromium and
# chromium-driver) when it is not there yet. Needs root or sudo; prints what to do otherwise.
set -euo pipefail

if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    run=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    run=(sudo -n)
else
    echo "lakecompat: the HTML report test needs Chromium. Install it as root with:" >&2
    echo "    apt-get install -y chromium chromium-driver" >&2
    exit 1
fi
echo "Installing Chromium and its WebDriver (Debian packages chromium, chromium-driver)..."
export DEBIAN_FRONTEND=noninteractive
if ! "${run[@]}" apt-get install -y --no-install-recommends chromium chromium-driver \
        >/tmp/lakecompat-apt.log 2>&1; then
    # A fresh machine may have no package lists yet.
    "${run[@]}" apt-get update >>/tmp/lakecompat-apt.log 2>&1
    "${run[@]}" apt-get install -y --no-install-recommends chromium chromium-driver \
        >>/tmp/lakecompat-apt.log 2>&1 || {
        echo "lakecompat: installing Chromium failed; see /tmp/lakecompat-apt.log" >&2
        exit 1
    }
fi
