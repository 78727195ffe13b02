#!/usr/bin/env bash
# The container image: scripts/build-image builds it (binaries and image,
# podman installed with apt-get when missing), then the image is checked
# the way a user would find it: its user is not root, its entrypoint is
# aap2agui, /tmp is writable by anyone and /data by its user, and each
# binary taken out of the image's filesystem runs (--version). Running
# the container itself needs a container runtime that these machines may
# refuse (setrlimit is not permitted in some sandboxes); when it can run,
# its /healthz and /readyz must answer.
set -euo pipefail
cd "$(dirname "$0")/.."
name=localhost/aapagui:ci
bash scripts/build-image "$name"

echo "== checks of $name"
fail() { echo "image-test: $*" >&2; exit 1; }
user=$(podman image inspect "$name" --format '{{.Config.User}}')
entrypoint=$(podman image inspect "$name" --format '{{json .Config.Entrypoint}}')
size=$(podman image inspect "$name" --format '{{.Size}}')
case ${user%%:*} in "" | 0 | root) fail "the image runs as '$user', which is root" ;; esac
[ "$entrypoint" = '["/usr/local/bin/aap2agui"]' ] || fail "entrypoint is $entrypoint, want [\"/usr/local/bin/aap2agui\"]"

tmp=$(mktemp -d)
container=$(podman create "$name")
trap 'podman rm -f "$container" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
podman export "$container" | tar -C "$tmp" -xf -
podman export "$container" | tar -tvf - >"$tmp.list"
grep -Eq '^drwxrwxrwt .* tmp/?$' "$tmp.list" || fail "/tmp is not writable by anyone"
grep -Eq '^drwx.* (nonroot/nonroot|65532/65532) .* data/?$' "$tmp.list" || fail "/data does not belong to the image's user"
rm -f "$tmp.list"
test -s "$tmp/etc/ssl/certs/ca-certificates.crt" || fail "no CA certificates"
for prog in aap2agui agui2aap; do
	bin=$tmp/usr/local/bin/$prog
	file "$bin" 2>/dev/null | grep -q 'statically linked' || ! command -v file >/dev/null || fail "$prog is not statically linked"
	out=$("$bin" --version)
	echo "$out"
	[[ $out == "$prog "* ]] || fail "$prog --version printed '$out'"
done

# The container itself, where a runtime may run it.
# The host's network (no port mapping to set up); on SIGTERM (podman stop)
# it drains for --shutdown-delay and must exit 0.
if podman run --rm --network none "$name" --version >/dev/null 2>"$tmp/run.err"; then
	echo "== podman run $name"
	podman run -d --name aapagui-ci-run --network host "$name" --listen 127.0.0.1:18080 --store memory: --shutdown-delay 1s >/dev/null
	trap 'podman rm -f aapagui-ci-run "$container" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	for path in /healthz /readyz; do
		ok=
		for _ in $(seq 100); do
			if curl -fsS "http://127.0.0.1:18080$path" >/dev/null 2>&1; then ok=1; break; fi
			sleep 0.1
		done
		[ -n "$ok" ] || { podman logs aapagui-ci-run >&2; fail "the container did not answer $path"; }
	done
	podman stop -t 30 aapagui-ci-run >/dev/null
	[ "$(podman inspect aapagui-ci-run --format '{{.State.ExitCode}}')" = 0 ] || fail "the container did not exit 0 on SIGTERM"
else
	echo "== podman run refused here ($(head -c 200 "$tmp/run.err")): the container was not run"
fi
echo "image $name: user $user, entrypoint $entrypoint, $((size / 1000000)) MB"
