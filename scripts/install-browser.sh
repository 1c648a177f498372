#!/usr/bin/env bash
# install-browser.sh installs Debian's chromium for the authorization
# server's consent-page browser tests (e2e's TestConsentInBrowser and
# TestUpstreamConsentInBrowser; cmd/mcpstack's login through Chromium).
# It does nothing when /usr/bin/chromium already exists, so it is safe to
# run before every test run. CI runs it, then sets MCPSTACK_REQUIRE_BROWSER=1
# so that a missing browser fails the test instead of skipping it.
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
test -x /usr/bin/chromium
echo "install-browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
