#!/usr/bin/env bash
# Installs what blkring needs to build, run and benchmark, on Debian; with
# `test`, also what the network drivers, the NBD export and their tests
# need (libnbd, nbdkit, qemu-nbd; a Ceph cluster and librbd for the rbd
# module, about 200 MB).  As root it runs apt-get itself (update
# first: a fresh machine knows no packages); otherwise it prints the exact
# line to run and fails.
set -euo pipefail

# package:what-proves-it-is-there (a file or a command)
needs=(
	gcc:cc
	g++:g++
	make:make
	pkg-config:pkg-config
	liburing-dev:/usr/include/liburing.h
	libjson-c-dev:/usr/include/json-c/json.h
	libisal-dev:/usr/include/isa-l.h
	libssl-dev:/usr/include/openssl/evp.h
	libxxhash-dev:/usr/include/xxhash.h
	jq:jq
	python3:python3
	gnuplot-nox:gnuplot
	fio:fio
	util-linux:losetup
	scdoc:scdoc
	man-db:man
	clang:clang
	libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
)

if [[ ${1:-} == test ]]; then
	needs+=(
		libnbd-dev:/usr/include/libnbd.h
		libnbd-bin:nbdinfo
		nbdkit:nbdkit
		nbdkit-plugin-dev:/usr/include/nbdkit-plugin.h
		qemu-utils:qemu-img
		librbd-dev:/usr/include/rbd/librbd.h
		librados-dev:/usr/include/rados/librados.h
		ceph-mon:ceph-mon
		ceph-osd:ceph-osd
		ceph-common:rbd
		ceph-base:monmaptool
	)
fi

missing=()
for n in "${needs[@]}"; do
	pkg=${n%%:*}
	probe=${n#*:}
	if [[ $probe == /* ]]; then
		[[ -e $probe ]] || missing+=("$pkg")
	else
		command -v "$probe" >/dev/null 2>&1 || missing+=("$pkg")
	fi
done

[[ ${#missing[@]} -eq 0 ]] && exit 0

line="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
	echo "blkring: missing packages: ${missing[*]}" >&2
	echo "blkring: run as root:  apt-get update && $line" >&2
	exit 1
fi
echo "blkring: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
