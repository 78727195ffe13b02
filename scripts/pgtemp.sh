# Sourced by .ci/run (and usable by hand): starts a throwaway PostgreSQL
# cluster in a temporary directory and exports its DSN as
# AAPAGUI_TEST_POSTGRES; the cluster is stopped and removed when the
# sourcing shell exits.
#
#   source scripts/pgtemp.sh && pgtemp_start
#
# It uses Debian's server binaries (/usr/lib/postgresql/<version>/bin),
# installing the postgresql package with apt-get when they are missing and
# the shell runs as root. As root, the cluster runs as the postgres user.
# The cluster is for tests: fsync is off (PGTEMP_FSYNC=on keeps it on, for
# measurements).

pgtemp_start() {
	local bin initdb
	initdb=$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$initdb" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "pgtemp: PostgreSQL server binaries not found; install Debian's postgresql package" >&2
			return 1
		fi
		echo "== apt-get install postgresql"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
		initdb=$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)
	fi
	bin=$(dirname "$initdb")

	local as=()
	PGTEMP_DIR=$(mktemp -d /tmp/aapagui-pg.XXXXXX)
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$PGTEMP_DIR"
		as=(runuser -u postgres --)
	fi
	PGTEMP_AS=("${as[@]}")
	PGTEMP_BIN=$bin
	trap pgtemp_stop EXIT
	trap 'pgtemp_stop; exit 130' INT TERM

	# The postgres user may not be able to enter the current directory.
	cd "$PGTEMP_DIR"
	"${as[@]}" "$bin/initdb" -D "$PGTEMP_DIR/data" -U postgres -A trust -E UTF8 --no-sync >"$PGTEMP_DIR/initdb.log" 2>&1 ||
		{ cat "$PGTEMP_DIR/initdb.log" >&2; return 1; }
	# A free port, below the kernel's range of ephemeral ports (a client
	# socket may hold one of those without anything answering on it), on
	# which nothing answers now. Should the server still not get it
	# (another process took it meanwhile), another port is tried.
	local low=32768 port started=
	if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
		read -r low _ </proc/sys/net/ipv4/ip_local_port_range
	fi
	[ "$low" -gt 11000 ] || low=61000 # an unusual range: above it then
	for _ in 1 2 3 4 5; do
		for _ in $(seq 50); do
			if [ "$low" = 61000 ]; then
				port=$((61000 + RANDOM % 4000))
			else
				port=$((10000 + RANDOM % (low - 10000)))
			fi
			if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				break
			fi
		done
		if "${as[@]}" "$bin/pg_ctl" -D "$PGTEMP_DIR/data" -l "$PGTEMP_DIR/server.log" -w -t 60 start \
			-o "-p $port -k $PGTEMP_DIR -c listen_addresses=127.0.0.1 -c fsync=${PGTEMP_FSYNC:-off} -c max_connections=300" >/dev/null; then
			started=1
			break
		fi
	done
	[ -n "$started" ] || { cat "$PGTEMP_DIR/server.log" >&2; return 1; }
	"${as[@]}" "$bin/createdb" -h "$PGTEMP_DIR" -p "$port" -U postgres aapagui
	cd - >/dev/null
	export AAPAGUI_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/aapagui?sslmode=disable"
	echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (AAPAGUI_TEST_POSTGRES)"
}

pgtemp_stop() {
	if [ -n "${PGTEMP_DIR:-}" ] && [ -d "$PGTEMP_DIR/data" ]; then
		(cd "$PGTEMP_DIR" && "${PGTEMP_AS[@]}" "$PGTEMP_BIN/pg_ctl" -D "$PGTEMP_DIR/data" -m immediate -w stop >/dev/null 2>&1) || true
	fi
	[ -n "${PGTEMP_DIR:-}" ] && rm -rf "$PGTEMP_DIR"
	PGTEMP_DIR=
}
