#!/usr/bin/env bash
# Installs what the web UI's browser test needs on a fresh machine (issue
# 43): Debian's chromium, which the test drives headless through the
# DevTools protocol. Does nothing when a chromium is there; without root
# and sudo, or when the archives do not offer it, the test skips saying
# why.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "==> the web UI browser test needs root to install chromium; it will skip"
		exit 0
	fi
	sudo="sudo"
fi
candidate() { apt-cache policy chromium 2>/dev/null | grep -q 'Candidate: [0-9]'; }
candidate || $sudo apt-get update
if ! candidate; then
	echo "==> chromium is not available from apt; the web UI browser test will skip"
	exit 0
fi
echo "==> installing Debian's chromium for the web UI browser test"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends chromium
