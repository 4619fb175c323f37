#!/usr/bin/env bash
# blkring table check FILE and blkring info table:FILE: the resolved layout
# (targets, legs, their sector ranges) as text and JSON; load errors name
# FILE:N and what was expected, exit 2, in JSON too.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

mkdir "$T/sub" "$T/a,b"
cat >"$T/vol.table" <<'EOF'
# linear, a comment, a blank line, striped with a non-power-of-two chunk, zero

0 2048 linear null:size=1M 0
2048 4608 striped 2 24 null:size=2M,name=a 16 null:size=2M,name=b 0
6656 100 zero
EOF
printf '0 1000 linear table:../vol.table 8\n' >"$T/sub/outer.table"
printf '0 100 zero\n' >"$T/a,b/z.table"

"$B" table check "$T/vol.table" >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && diff -u - "$T/out" >"$T/diff" <<EOF; then
table:$T/vol.table: valid
  size: 6756 sectors (3378KiB)
  line 3: sectors 0-2047 (2048) linear null:size=1M 0
    leg 0: null:size=1M, sectors 0-2047 (2048)
  line 4: sectors 2048-6655 (4608) striped 2 24 null:name=a,size=2M 16 null:name=b,size=2M 0
    leg 0: null:name=a,size=2M, sectors 16-2319 (2304)
    leg 1: null:name=b,size=2M, sectors 0-2303 (2304)
  line 5: sectors 6656-6755 (100) zero
EOF
	pass check_text
else
	fail check_text "exit $rc: $(head -c 600 "$T/diff" "$T/err")"
fi

"$B" table check "$T/sub/outer.table" --output-format=json >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['valid'] is True and d['sectors'] == 1000 and d['size'] == 512000, d
t, = d['targets']
assert (t['line'], t['start'], t['length'], t['type']) == (1, 0, 1000, 'linear'), t
assert t['legs'] == [{'spec': 'table:$T/vol.table', 'start': 8, 'length': 1000}], t['legs']
" "$T/out"; then
	pass check_json_stacked
else
	fail check_json_stacked "exit $rc: $(head -c 300 "$T/err")"
fi

# The largest table (2^55 - 1 sectors): its size in bytes is above
# INT64_MAX and stays positive, in table check and in info.
printf '0 36028797018963967 zero\n' >"$T/max.table"
"$B" table check "$T/max.table" --output-format=json >"$T/out" 2>"$T/err"
rc1=$?
"$B" info "table:$T/max.table" --output-format=json >"$T/out2" 2>>"$T/err"
rc2=$?
if [[ $rc1 == 0 && $rc2 == 0 ]] && python3 -c "
import json, sys
d, i = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n = (1 << 55) - 1
assert d['size'] == n * 512 and d['sectors'] == n, d
assert d['targets'][0]['length'] == n, d['targets']
assert i['size'] == n * 512 and i['targets'][0]['length'] == n, i
" "$T/out" "$T/out2"; then
	pass check_json_huge
else
	fail check_json_huge "exit $rc1/$rc2: $(head -c 300 "$T/err" "$T/out")"
fi

"$B" table check "$T/a,b/z.table" >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && grep -qF "line 1: sectors 0-99 (100) zero" "$T/out"; then
	pass check_comma_in_path
else
	fail check_comma_in_path "exit $rc: $(head -c 300 "$T/err")"
fi

# name, table text, the expected message after "FILE:"
expect_error() {
	local name=$1 text=$2 msg=$3 rc
	printf '%b' "$text" >"$T/bad.table"
	"$B" table check "$T/bad.table" >"$T/out" 2>"$T/err"
	rc=$?
	if [[ $rc != 2 ]] || ! grep -qF "blkring: table check: $T/bad.table:$msg" "$T/err"; then
		fail "$name" "exit $rc, stderr: $(head -c 300 "$T/err")"
		return
	fi
	"$B" table check "$T/bad.table" --output-format=json >"$T/out" 2>/dev/null
	rc=$?
	if [[ $rc == 2 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['valid'] is False and d['file'] == '$T/bad.table', d
assert d['line'] == int(sys.argv[2]) and d['error'].endswith(sys.argv[3]), d
" "$T/out" "${msg%%:*}" "${msg#*: }"; then
		pass "$name"
	else
		fail "$name" "json, exit $rc: $(head -c 300 "$T/out")"
	fi
}

expect_error overlap '0 2048 zero\n2000 10 zero\n' \
	"2: start 2000 overlaps the previous target, which ends at sector 2048"
expect_error unknown_target '# x\n0 8 mirror a b\n' \
	"2: unknown target 'mirror'; known targets: linear, striped, zero, error, flakey"
expect_error bad_number '0 1x zero\n' "1: length '1x': expected a number of sectors above 0"
expect_error stripe_chunk '0 64 striped 2 4 null: 0 null: 0\n' \
	"1: striped: argument 2 '4': chunk must be at least 8 sectors (one page)"

# A name with ":N:" in it is not taken for the line.
printf '0 8 zero\n0 8 zero\n' >"$T/v:12:x.table"
"$B" table check "$T/v:12:x.table" --output-format=json >"$T/out" 2>/dev/null
rc=$?
if [[ $rc == 2 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert (d['file'], d['line']) == ('$T/v:12:x.table', 2), d
" "$T/out"; then
	pass json_error_colon_name
else
	fail json_error_colon_name "exit $rc: $(head -c 300 "$T/out")"
fi

# An error inside a nested table: the outer line first, then the nested FILE:N.
printf '0 10 zero\n5 10 zero\n' >"$T/sub/inner.table"
printf '# outer\n0 8 linear table:inner.table 0\n' >"$T/sub/nest.table"
"$B" table check "$T/sub/nest.table" --output-format=json >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 2 ]] && grep -qF "$T/sub/nest.table:2: linear: argument 1 'table:inner.table': device does not open: $T/sub/inner.table:2: start 5 overlaps" "$T/err" &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert (d['file'], d['line'], d['valid']) == ('$T/sub/nest.table', 2, False), d
" "$T/out"; then
	pass nested_error
else
	fail nested_error "exit $rc: $(head -c 300 "$T/err")"
fi

"$B" table check "$T/missing.table" >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 2 ]] && grep -qF "table:$T/missing.table: cannot read: No such file or directory" "$T/err"; then
	pass missing_file
else
	fail missing_file "exit $rc: $(head -c 300 "$T/err")"
fi

"$B" table check >"$T/out" 2>"$T/err"
rc1=$?
"$B" table verify "$T/vol.table" >"$T/out" 2>"$T/err2"
rc2=$?
if [[ $rc1 == 2 && $rc2 == 2 ]] && grep -q "usage: blkring table check FILE" "$T/err" &&
	grep -q "unknown subcommand 'verify'" "$T/err2"; then
	pass usage
else
	fail usage "exit $rc1/$rc2"
fi

# --help, wherever it stands, prints the usage on stdout and exits 0.
help_ok() {
	"$B" "$@" >"$T/out" 2>"$T/err" && [[ ! -s $T/err ]] && grep -q "^usage: blkring $1 " "$T/out"
}
if help_ok table check --help && help_ok table check -h && help_ok table check "$T/vol.table" --help &&
	help_ok table --help && help_ok info --help && help_ok info null: --help; then
	pass help
else
	fail help "stderr: $(head -c 300 "$T/err")"
fi

"$B" info "table:$T/vol.table" >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && grep -q "^  type: *table$" "$T/out" && grep -q "^  table:$" "$T/out" &&
	grep -qF "    line 4: sectors 2048-6655 (4608) striped 2 24" "$T/out" &&
	grep -qF "      leg 0: null:name=a,size=2M, sectors 16-2319 (2304)" "$T/out"; then
	pass info_text
else
	fail info_text "exit $rc: $(head -c 300 "$T/err")"
fi

"$B" info "table:$T/vol.table" --output-format=json >"$T/out" 2>"$T/err"
rc1=$?
"$B" info null:size=1M --output-format=json >"$T/out2" 2>>"$T/err"
rc2=$?
if [[ $rc1 == 0 && $rc2 == 0 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['type'] == 'table' and d['size'] == 6756 * 512, d
assert [t['type'] for t in d['targets']] == ['linear', 'striped', 'zero'], d['targets']
assert [len(t['legs']) for t in d['targets']] == [1, 2, 0]
assert 'targets' not in json.load(open(sys.argv[2])), 'a null device has no targets'
" "$T/out" "$T/out2"; then
	pass info_json
else
	fail info_json "exit $rc1/$rc2: $(head -c 300 "$T/err")"
fi
