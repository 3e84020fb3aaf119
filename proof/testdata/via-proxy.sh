#!/usr/bin/env bash
# via-proxy.sh MCPCHAOS REPORT CLIENT... URL
#
# Runs the client program CLIENT through `mcpchaos proxy`, with no fault, as
# the conformance suite's client mode wants a client: the suite appends the
# scenario server's URL, which becomes the proxy's upstream; the client gets
# the proxy's URL in its place. The proxy's judgement of the session is
# written to REPORT. The exit status is the client's.
set -u
mcpchaos=$1 report=$2
shift 2
url=${*: -1}
set -- "${@:1:$#-1}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$mcpchaos" proxy --listen 127.0.0.1:0 --upstream "$url" --seed 1 --report "$report" 2>"$log" &
proxy=$!
front=
for _ in $(seq 200); do
	front=$(sed -n 's/.*point the client at \([^ ]*\) (relayed to.*/\1/p' "$log")
	[ -n "$front" ] && break
	kill -0 "$proxy" 2>/dev/null || break
	sleep 0.05
done
if [ -z "$front" ]; then
	echo "via-proxy.sh: mcpchaos proxy did not start:" >&2
	cat "$log" >&2
	exit 3
fi
"$@" "$front"
code=$?
kill -TERM "$proxy"
wait "$proxy"
cat "$log" >&2
exit "$code"
