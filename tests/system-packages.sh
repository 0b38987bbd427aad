#!/bin/sh
# The Debian packages the tests need: Chromium and its WebDriver, for the browser tests
# of the report page (Playwright's own browser download is not reachable here), and
# PostgreSQL (its server binaries, amcheck included) for tests/peers/servers/pg_server.py.
# Installed only when missing; as root, or through sudo.
set -eu
command -v chromium >/dev/null && command -v chromedriver >/dev/null \
    && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
PACKAGES="chromium chromium-driver postgresql"
$SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null 2>&1 || {
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES
}
