#!/usr/bin/env bash
# Installs what the docker driver's and the bridge network's tests need on
# a fresh machine (issues 39 and 40): Debian's docker.io (dockerd; the
# tests start an engine of their own under a temp dir, never the system
# one), busybox-static (the test image's only binary, imported without
# network), docker-registry (the registry the pull tests push to and pull
# from on 127.0.0.1; its service is not needed, the tests start their
# own), containernetworking-plugins (the CNI plugins bridge networks are
# built with, in /usr/lib/cni), iptables (which the firewall and portmap
# plugins drive, and the test engine with a bridge of its own) and
# iproute2 (whose ip makes that bridge). Installs only what is missing; does nothing when
# all are there.
set -euo pipefail

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
# The image needs the static busybox: Debian's plain busybox is linked
# against a libc the image does not have.
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
for pkg in busybox-static docker-registry containernetworking-plugins iptables iproute2; do
	installed "$pkg" || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "==> docker and bridge network tests need root to install ${missing[*]}; they will skip"
		exit 0
	fi
	sudo="sudo"
fi
candidate() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; }
# The package lists are refreshed only when one of the missing packages
# is unknown to them; a package the archives still do not offer (an older
# release without containernetworking-plugins) is left out, and its tests
# skip, saying why.
for pkg in "${missing[@]}"; do
	if ! candidate "$pkg"; then
		$sudo apt-get update
		break
	fi
done
available=()
for pkg in "${missing[@]}"; do
	if candidate "$pkg"; then
		available+=("$pkg")
	else
		echo "==> $pkg is not available from apt; the tests that need it will skip"
	fi
done
if [ "${#available[@]}" -eq 0 ]; then
	exit 0
fi
echo "==> installing Debian's ${available[*]} for the docker driver's and the bridge network's tests"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${available[@]}"
