#!/usr/bin/env bash
# Installs what the docker driver's tests need on a fresh machine (issue
# 39): Debian's docker.io (dockerd; the tests start an engine of their own
# under a temp dir, never the system one), busybox-static (the test
# image's only binary, imported without network) and docker-registry (the
# registry the pull tests push to and pull from on 127.0.0.1; its service
# is not needed, the tests start their own). Does nothing when all three
# are there.
set -euo pipefail

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
# The image needs the static busybox: Debian's plain busybox is linked
# against a libc the image does not have.
if command -v dockerd >/dev/null 2>&1 && installed busybox-static && installed docker-registry; then
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "==> docker tests need root to install docker.io, busybox-static and docker-registry; they will skip"
		exit 0
	fi
	sudo="sudo"
fi
echo "==> installing Debian's docker.io, busybox-static and docker-registry for the docker driver's tests"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends docker.io busybox-static docker-registry
