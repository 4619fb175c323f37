#!/usr/bin/env bash
# direct follows fio (default 0, buffered) on file devices; given, it
# overrides the spec's direct= key, and without it the spec's key stands:
# the flags of the descriptor the running bench holds on the file say which
# it got.
B=${BLKRING:-build/blkring}
T=$(mktemp -d /var/tmp/blkring-direct.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# Prints the O_DIRECT bit (octal 040000) of the fd a bench job holds on $1.
direct_flag() { # file, bench args...
	local f=$1 pid fd flags
	shift
	"$B" bench --name=d --rw=randread --bs=4k --iodepth=4 --runtime=2 --time_based "$@" \
		>/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		for fd in /proc/$pid/fd/*; do
			[[ $(readlink "$fd" 2>/dev/null) == "$f" ]] || continue
			flags=$(awk '/^flags:/ {print $2}' "/proc/$pid/fdinfo/${fd##*/}")
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			echo $(((8#$flags & 8#40000) != 0))
			return
		done
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo none
}

F="$T/f.img"
truncate -s 16M "$F"
case_() { # name, expected, bench args...
	local name=$1 want=$2 got
	shift 2
	got=$(direct_flag "$F" "$@")
	if [[ $got == "$want" ]]; then
		echo "PASS $name"
	else
		echo "FAIL $name: O_DIRECT bit $got, expected $want"
	fi
}
case_ direct_default_off 0 --filename="$F"
case_ direct_1 1 --filename="$F" --direct=1
case_ direct_0_overrides_spec 0 --filename="file:$F,direct=1" --direct=0
case_ direct_1_overrides_spec 1 --filename="file:$F,direct=0" --direct=1
case_ direct_spec_kept 0 --filename="file:$F,direct=0"
case_ direct_spec_1_kept 1 --filename="file:$F,direct=1"
