# Shared by the shell tests (tests/*.test.sh): one line per case, as
# tests/run-tests.sh counts them.
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }
# check NAME CONDITION WHY: PASS when the condition (evaluated) holds.
check() { if eval "$2"; then pass "$1"; else fail "$1" "$3"; fi; }

# fio, the reference the bench tests compare with, bounded: fio 3.33's
# job process sometimes sleeps on in its thinktime past its runtime and
# never exits (thinktime_spin jobs, about 1 run in 6 here).  No run may
# hang a test: one that has not ended after FIO_TIMEOUT seconds is killed
# and run again, up to three times, and only the last run's output counts.
fio() {
	local rc try out
	out=$(mktemp) || return 1
	for try in 1 2 3; do
		timeout -k 5 "${FIO_TIMEOUT:-60}" fio "$@" >"$out"
		rc=$?
		((rc == 124 || rc == 137)) || break
		echo "fio did not end within ${FIO_TIMEOUT:-60} s (run $try of 3)" >&2
	done
	cat "$out"
	rm -f "$out"
	return "$rc"
}

# fio_ref NAME [FILE...] -- ARGS...: `fio ARGS` (the wrapper above) as a
# reference run, the same in every build tree: fio is one binary, only
# blkring differs.  Under tests/run-tests.sh (BLKRING_FIO_CACHE, one
# directory per run) a run that exits 0 is kept there with its stdout,
# stderr and FILEs (globs relative to $T, the test's scratch directory),
# and a later tree's test gets them back instead of running fio again.
# The key is the test, NAME, the directory it runs in and ARGS, with $T
# standing for the scratch directory (it differs per tree) there and in
# the output; a job file named in ARGS is the same script's in every
# tree.  Without BLKRING_FIO_CACHE fio simply runs.
fio_ref() {
	local name=$1 files=() dir tmp rc f
	shift
	while (($#)) && [[ $1 != -- ]]; do
		files+=("$1")
		shift
	done
	shift
	if [[ -z ${BLKRING_FIO_CACHE:-} || ! -d $BLKRING_FIO_CACHE || -z ${T:-} ]]; then
		fio "$@"
		return
	fi
	dir=$BLKRING_FIO_CACHE/${0##*/}.$name.$(printf '%s\0' "${0##*/}" "$name" \
		"${PWD//"$T"/@T@}" "${@//"$T"/@T@}" | sha1sum | cut -c1-16)
	if [[ -f $dir/rc ]]; then
		cp -a "$dir/files/." "$T/" &&
			_fio_ref_subst "$dir/out" @T@ "$T" &&
			_fio_ref_subst "$dir/err" @T@ "$T" >&2
		return
	fi
	tmp=$(mktemp -d "$BLKRING_FIO_CACHE/.new.XXXXXX") || return 1
	fio "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/out"
	cat "$tmp/err" >&2
	if ((rc == 0)) && mkdir "$tmp/files" && (
		cd "$T" || exit 1
		shopt -s nullglob
		for f in "${files[@]}"; do
			# shellcheck disable=SC2086 # the FILEs are globs
			set -- $f
			(($# == 0)) || cp -a --parents -- "$@" "$tmp/files/" || exit 1
		done
	) && _fio_ref_subst "$tmp/out" "$T" @T@ >"$tmp/out.k" &&
		_fio_ref_subst "$tmp/err" "$T" @T@ >"$tmp/err.k" &&
		mv "$tmp/out.k" "$tmp/out" && mv "$tmp/err.k" "$tmp/err" && echo 0 >"$tmp/rc"; then
		mv -T "$tmp" "$dir" 2>/dev/null
	fi
	rm -rf "$tmp"
	return "$rc"
}
# _fio_ref_subst FILE FROM TO: FILE with every FROM (a path) made TO.
_fio_ref_subst() {
	local from to
	if ! grep -qF -- "$2" "$1"; then
		cat "$1"
		return
	fi
	from=$(printf '%s' "$2" | sed 's/[]\/$*.^[]/\\&/g')
	to=$(printf '%s' "$3" | sed 's/[\/&]/\\&/g')
	sed "s/$from/$to/g" "$1"
}

# beside CMD...: CMD in the background, beside the test's next run (runs
# that wait on timers or are held to a rate); beside_wait waits for it.
BESIDE_PID=
beside() {
	"$@" &
	BESIDE_PID=$!
}
beside_wait() {
	[[ -z $BESIDE_PID ]] || wait "$BESIDE_PID"
	BESIDE_PID=
}

# The bench tests' cases ($B is the blkring binary, $T a scratch directory).
# expect_json NAME CHECK ARGS...: PASS when `$B bench --output-format=json
# ARGS` exits 0 and the Python CHECK passes with the output loaded as d.
expect_json() {
	local name=$1 check=$2 rc why
	shift 2
	timeout 300 "$B" bench --output-format=json "$@" >"$T/out.json" 2>"$T/err"
	rc=$?
	if [[ $rc != 0 ]]; then
		fail "$name" "exit $rc: $(head -c 300 "$T/err")"
	elif why=$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$check
" "$T/out.json" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(tail -n 3 <<<"$why")"
	fi
}

# expect_err NAME STATUS TEXT ARGS...: PASS when `$B bench ARGS` exits
# STATUS with TEXT in its stderr; expect_err_re takes a grep -E pattern.
expect_err() { bench_fails -F "$@"; }
expect_err_re() { bench_fails -E "$@"; }
bench_fails() {
	local mode=$1 name=$2 want=$3 text=$4 rc
	shift 4
	timeout 300 "$B" bench "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [[ $rc == "$want" ]] && grep -q "$mode" -- "$text" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -c 300 "$T/err")"
	fi
}
