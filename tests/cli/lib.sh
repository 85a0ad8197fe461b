# Shared by the shell suites: counters, verdicts and the command runner.
# The including script sets $tmp (a scratch folder) first.
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
has() { grep -qF -- "$2" "$1"; }
# run NAME WANT_RC CMD...: stdout in $tmp/out, stderr in $tmp/err; on
# another exit status, a failure with the start of stderr
run() {
	r_name=$1
	r_want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$r_want" ] && return 0
	bad "$r_name: exit $rc, want $r_want: $(head -c 300 "$tmp/err")"
	return 1
}
# port_base SEED: a port to listen on (and ports after it), below the
# kernel's ephemeral range: the ranks' own connections and data listeners
# take theirs from that range, and one of them still open would hold the
# port ("Address already in use")
port_base() {
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	[ "${lo:-0}" -gt 12000 ] 2>/dev/null || lo=32768
	echo $((10000 + $1 % (lo - 11000)))
}
