#!/usr/bin/env bash
# A throwaway single-node Ceph cluster for the RBD tests: one mon (msgr v2
# on a free 127.0.0.1 port), one memstore OSD, no mgr, cephx on, all of it
# (conf, keyrings, data, logs, sockets, pid files) inside one directory and
# nothing in /etc/ceph or /var.  Clients need only CEPH_CONF=DIR/ceph.conf.
#
#   tests/ceph-cluster.sh start DIR              ready for RBD I/O on exit 0
#   tests/ceph-cluster.sh stop DIR               SIGKILL by DIR's pid files
#   tests/ceph-cluster.sh image DIR NAME SIZE_MB rbd/NAME, SIZE_MB MiB
#   tests/ceph-cluster.sh kill-osd DIR           SIGKILL the OSD only
#   tests/ceph-cluster.sh needs                  the Debian packages
#
# The daemons daemonise and outlive a crashed test: a test traps `stop`.
set -euo pipefail

PACKAGES="ceph-mon ceph-osd ceph-common ceph-base librbd-dev librados-dev"
LIMIT=60 # seconds for a whole start, or for any other command

usage() {
	echo "usage: $0 start|stop|kill-osd DIR | image DIR NAME SIZE_MB | needs" >&2
	exit 2
}

# left: the seconds until the deadline, for timeout(1); fails once past it.
left() {
	local n=$((DEADLINE - SECONDS))
	((n > 0)) || {
		echo "ceph-cluster: no time left (${LIMIT}s)" >&2
		return 1
	}
	echo "$n"
}

# ours PID: PID runs with this cluster's conf (a pid file can outlive its
# process, and the pid be reused; a zombie's cmdline is empty).
ours() {
	[[ $1 =~ ^[0-9]+$ ]] &&
		tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "-c $CONF "
}

# kill_pidfiles GLOB: SIGKILL each live daemon named by D/run/GLOB.pid and
# wait (bounded) until all are gone, then drop the pid files.
kill_pidfiles() {
	local f pid files=() pids=() i alive
	for f in "$D"/run/$1.pid; do
		[[ -e $f ]] || continue
		files+=("$f")
		pid=$(<"$f") || continue
		if ours "$pid"; then
			kill -KILL "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	# Gone means no longer ours: init may be slow to reap (or never reap,
	# in a container) and a zombie keeps its pid.
	for ((i = 0; i < 500; i++)); do
		alive=0
		for pid in "${pids[@]}"; do ours "$pid" && alive=1; done
		((alive == 0)) && break
		sleep 0.02
	done
	for pid in "${pids[@]}"; do
		if ours "$pid"; then
			echo "ceph-cluster: pid $pid survives SIGKILL" >&2
			return 1
		fi
	done
	rm -f "${files[@]}"
}

# run CMD...: CMD under the deadline, its output appended to the setup log.
run() {
	timeout -k 2 "$(left)" "$@" >>"$D/log/setup.log" 2>&1
}

# step WHAT [LOG]: names what start does now, and the daemon log that
# explains it if it fails.
step() {
	STEP=$1
	DLOG=${2:-}
	echo "== $STEP" >>"$D/log/setup.log"
}

start_failed() {
	local rc=$1
	((rc != 0)) || return 0
	trap - EXIT
	{
		echo "ceph-cluster: start $D failed ($rc): $STEP"
		tail -n 12 "$D/log/setup.log" 2>/dev/null | sed 's/^/  /'
		if [[ -n $DLOG && -s $DLOG ]]; then
			echo "ceph-cluster: tail of $DLOG:"
			tail -n 20 "$DLOG" | sed 's/^/  /'
		fi
	} >&2
	kill_pidfiles '*' || true
	exit "$rc"
}

# write_conf PORT: the cluster's ceph.conf, the mon on 127.0.0.1:PORT.
write_conf() {
	cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$1
public network = 127.0.0.0/8
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
run dir = $D/run
# one OSD: replicas of one, placed on OSDs rather than hosts
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
# else every map change waits about 1 s
paxos propose interval = 0.1
paxos min wait = 0.01
# the mon stops itself when the disk is under 5% free
mon data avail warn = 1
mon data avail crit = 0
# no mgr, ever
mon mgr mkfs grace = 31536000

[mon]
mon data = $D/mon/\$cluster-\$id
mon cluster log file = $D/log/cluster.log
log file = $D/log/\$name.log
pid file = $D/run/\$name.pid
admin socket = $D/run/\$name.asok
# a taken port fails at once (start picks another), not after 3 x 5 s
ms bind retry count = 1

[osd]
osd data = $D/osd/\$cluster-\$id
osd objectstore = memstore
# else writes crawl and memory balloons
memstore page set = true
memstore page size = 4096
# only the capacity reported: a 1 GiB default fills up (and blocks writes)
memstore device bytes = 34359738368
log file = $D/log/\$name.log
pid file = $D/run/\$name.pid
admin socket = $D/run/\$name.asok

[client]
# here, not in [global], or the OSD's mkfs fails (handle_auth_bad_method)
keyring = $D/client.admin.keyring
EOF
}

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

start() {
	local port try uuid osd init
	if [[ -e $D && -n $(ls -A "$D") ]]; then
		echo "ceph-cluster: $D is not empty" >&2
		exit 1
	fi
	# the conf values and the pid check are untried with whitespace
	if [[ $D == *[[:space:]]* ]]; then
		echo "ceph-cluster: no whitespace in DIR, please: $D" >&2
		exit 1
	fi
	for c in ceph-mon ceph-osd ceph-authtool monmaptool ceph rbd python3; do
		if ! command -v $c >/dev/null; then
			echo "ceph-cluster: no $c (apt-get install $PACKAGES)" >&2
			exit 1
		fi
	done
	mkdir -p "$D/run" "$D/log" "$D/mon" "$D/osd/ceph-0"
	STEP=setup DLOG=
	trap 'start_failed $?' EXIT
	trap 'exit 130' INT TERM
	FSID=$(</proc/sys/kernel/random/uuid)

	step keyrings
	run ceph-authtool --create-keyring "$D/mon.keyring" --gen-key -n mon. \
		--cap mon 'allow *'
	run ceph-authtool --create-keyring "$D/client.admin.keyring" --gen-key \
		-n client.admin --cap mon 'allow *' --cap osd 'allow *' \
		--cap mgr 'allow *' --cap mds 'allow *'
	run ceph-authtool --create-keyring "$D/osd/ceph-0/keyring" --gen-key \
		-n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' \
		--cap mgr 'allow profile osd'
	# the mon's mkfs puts every key of its keyring in its auth database
	run ceph-authtool "$D/mon.keyring" --import-keyring "$D/client.admin.keyring"
	run ceph-authtool "$D/mon.keyring" --import-keyring "$D/osd/ceph-0/keyring"

	# The port is free when picked, not when bound: another port if the
	# mon could not bind it.
	for try in 1 2 3; do
		port=$(free_port)
		write_conf "$port"
		step "mon on port $port" "$D/log/mon.a.log"
		rm -rf "$D/mon/ceph-a" "$D/log/mon.a.log"
		run monmaptool --create --clobber --fsid "$FSID" \
			--addv a "[v2:127.0.0.1:$port]" "$D/monmap"
		run ceph-mon -c "$CONF" --mkfs -i a --monmap "$D/monmap" \
			--keyring "$D/mon.keyring"
		# ceph-mon returns once its daemonised child is up
		run ceph-mon -c "$CONF" -i a && break
		grep -q "unable to bind" "$D/log/mon.a.log" 2>/dev/null && ((try < 3)) ||
			return 1
		kill_pidfiles mon.a
	done

	# One ceph CLI for both mon commands (each costs 0.3 s): the OSD's id
	# (its key came with the mon's mkfs) and the pool, before the OSD boots.
	# Interactive mode exits 0 whatever fails: its output says.
	step "osd new, pool rbd" "$D/log/mon.a.log"
	uuid=$(</proc/sys/kernel/random/uuid)
	printf 'osd new %s 0\nosd pool create rbd 8 8\n' "$uuid" |
		timeout -k 2 "$(left)" ceph -c "$CONF" >"$D/log/mon-cmds.out" 2>&1 || true
	cat "$D/log/mon-cmds.out" >>"$D/log/setup.log"
	grep -qx 0 "$D/log/mon-cmds.out"
	grep -qx "pool 'rbd' created" "$D/log/mon-cmds.out"
	step "osd mkfs" "$D/log/osd.0.log"
	run ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$uuid"
	step "osd start" "$D/log/osd.0.log"
	run ceph-osd -c "$CONF" -i 0

	# pool init writes to the pool: it returns once the OSD is up and the
	# PGs active, or never if the OSD dies; so it runs aside, watched.
	step "pool init" "$D/log/osd.0.log"
	osd=$(<"$D/run/osd.0.pid")
	timeout -k 2 "$(left)" rbd -c "$CONF" pool init rbd >>"$D/log/setup.log" 2>&1 &
	init=$!
	while kill -0 "$init" 2>/dev/null; do
		if ! ours "$osd"; then
			kill "$init" 2>/dev/null || true
			echo "osd.0 (pid $osd) exited" >>"$D/log/setup.log"
			return 1
		fi
		sleep 0.02
	done
	wait "$init"
	trap - EXIT
}

# main
(($# >= 1)) || usage
CMD=$1
if [[ $CMD == needs ]]; then
	echo "$PACKAGES"
	exit 0
fi
(($# >= 2)) || usage
D=$(realpath -m -- "$2")
CONF=$D/ceph.conf
DEADLINE=$((SECONDS + LIMIT))
case $CMD in
start)
	(($# == 2)) || usage
	start
	;;
stop)
	(($# == 2)) || usage
	kill_pidfiles '*'
	;;
kill-osd)
	(($# == 2)) || usage
	kill_pidfiles 'osd.*'
	;;
image)
	if (($# != 4)) || [[ ! $4 =~ ^[1-9][0-9]*$ ]]; then usage; fi
	timeout -k 2 "$LIMIT" rbd -c "$CONF" create --size "$4M" "rbd/$3"
	;;
*)
	usage
	;;
esac
