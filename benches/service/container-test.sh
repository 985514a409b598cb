#!/usr/bin/env bash
# Container check (`make container-test`, part of `make verify`, not of CI): builds the
# Dockerfile with buildah, then, inside the image, starts the server exactly as the image's
# ENTRYPOINT/CMD would, checks that it listens on 0.0.0.0:8080, answers /health and /ready with
# the shipped models loaded, solves a Max-Cut instance with a known optimum, and that the image's
# HEALTHCHECK command passes and the process runs as the non-root user.
#
# No Docker engine runs here and no image can be pulled, so the two base images are made locally:
#   BASE        Debian bookworm from `debootstrap --variant=minbase` (the slim image's content),
#   BUILD_BASE  that image plus a C/C++ toolchain, python3-venv, this machine's Rust toolchain
#               (rustup's site is not reachable) and this machine's CA certificates (PyPI and
#               crates.io are reached through the sandbox's TLS proxy).
# Where public images can be pulled, `buildah bud .` (or `docker build .`) uses the Dockerfile's
# defaults (debian:bookworm-slim, rust:1-bookworm) instead.
# Needs root, buildah, podman (for `podman import`) and debootstrap: apt-get install podman debootstrap.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${CONTAINER_WORK:-/var/tmp/rlsolver-container}
IMAGE=${IMAGE:-localhost/rlsolver:test}
BASE_IMAGE=localhost/rlsolver-base:bookworm
BUILD_IMAGE=localhost/rlsolver-build-base:bookworm
KEY=container-test-key
mkdir -p "$WORK"

for tool in buildah podman debootstrap; do
  command -v "$tool" > /dev/null || { echo "container-test: $tool is missing (apt-get install podman buildah debootstrap)" >&2; exit 1; }
done

if ! buildah inspect --type image "$BASE_IMAGE" > /dev/null 2>&1; then
  echo "== base image: debootstrap bookworm (minbase)"
  if [ ! -f "$WORK/rootfs.done" ]; then
    rm -rf "$WORK/rootfs"
    debootstrap --variant=minbase bookworm "$WORK/rootfs" http://deb.debian.org/debian > "$WORK/debootstrap.log"
    touch "$WORK/rootfs.done"
  fi
  rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*
  tar -C "$WORK/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE"
fi

if ! buildah inspect --type image "$BUILD_IMAGE" > /dev/null 2>&1; then
  echo "== build base: toolchains"
  ctr=$(buildah from "$BASE_IMAGE")
  buildah run --isolation chroot "$ctr" -- sh -c 'apt-get update && apt-get install -y --no-install-recommends gcc g++ make pkg-config libc6-dev ca-certificates curl python3 python3-venv && rm -rf /var/lib/apt/lists/*'
  if [ -d /usr/local/share/ca-certificates ]; then
    buildah copy "$ctr" /usr/local/share/ca-certificates /usr/local/share/ca-certificates
    buildah run --isolation chroot "$ctr" -- update-ca-certificates
  fi
  sysroot=$(rustc --print sysroot)
  buildah copy "$ctr" "$sysroot" /usr/local/rust
  buildah config --env PATH=/usr/local/rust/bin:/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env CARGO_HOME=/usr/local/cargo "$ctr"
  buildah run --isolation chroot "$ctr" -- cargo --version
  buildah commit --rm "$ctr" "$BUILD_IMAGE"
fi

echo "== build the image"
start=$(date +%s)
mkdir -p "$WORK/pip-cache" "$WORK/cargo-registry"
# --format docker keeps HEALTHCHECK (OCI image configs have no such field). The caches only
# save downloads between runs of this script.
buildah bud --isolation chroot --format docker --layers \
  --build-arg BASE="$BASE_IMAGE" --build-arg BUILD_BASE="$BUILD_IMAGE" \
  -v "$WORK/pip-cache:/root/.cache/pip" -v "$WORK/cargo-registry:/usr/local/cargo/registry" \
  -t "$IMAGE" . > "$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log"; echo "container-test: build failed" >&2; exit 1; }
grep -E '^(STEP|COMMIT|Successfully)' "$WORK/build.log" || true
buildah inspect --type image "$IMAGE" > "$WORK/inspect.json"
echo "built in $(( $(date +%s) - start )) s"

echo "== image configuration"
python3 - "$WORK/inspect.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
config = info["Docker"]["config"]
checks = {
    "user is rlsolver (non-root)": config.get("User") == "rlsolver",
    "entrypoint is rlsolver": config.get("Entrypoint") == ["rlsolver"],
    "cmd is serve": config.get("Cmd") == ["serve"],
    "exposes 8080": "8080/tcp" in (config.get("ExposedPorts") or {}),
    "listens on 0.0.0.0:8080": {"RLSOLVER_HOST=0.0.0.0", "RLSOLVER_PORT=8080"} <= set(config.get("Env") or []),
    "healthcheck curls /health": "/health" in " ".join((config.get("Healthcheck") or {}).get("Test") or []),
}
for name, ok in checks.items():
    print(("ok   " if ok else "FAIL ") + name)
sys.exit(0 if all(checks.values()) else 1)
PY
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' "$IMAGE"

echo "== run the server inside the image"
ctr=$(buildah from "$IMAGE")
trap 'buildah rm "$ctr" > /dev/null 2>&1 || true' EXIT
healthcheck=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Docker"]["config"]["Healthcheck"]["Test"][-1])' "$WORK/inspect.json")
# The ENTRYPOINT and CMD as the image declares them; keys given, so it serves 0.0.0.0:8080.
buildah run --isolation chroot --env RLSOLVER_API_KEYS="$KEY" --env HEALTHCHECK="$healthcheck" --env KEY="$KEY" "$ctr" -- sh -c '
  set -e
  test "$(id -u)" != 0 || { echo "FAIL runs as root"; exit 1; }
  rlsolver serve > /tmp/server.log 2>&1 &
  server=$!
  for i in $(seq 300); do curl -fs http://127.0.0.1:8080/ready > /dev/null && break; sleep 0.2; done
  curl -fsS http://127.0.0.1:8080/health; echo
  curl -fsS http://127.0.0.1:8080/ready; echo
  grep -q "0.0.0.0:8080" /tmp/server.log || { echo "FAIL not listening on 0.0.0.0:8080"; cat /tmp/server.log; exit 1; }
  sh -c "$HEALTHCHECK" > /dev/null && echo "ok   HEALTHCHECK command passes"
  # An even cycle of 8 nodes: bipartite, every edge can be cut (optimum 8).
  printf "8 8\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 6 1\n6 7 1\n7 8 1\n8 1 1\n" > /tmp/c8.txt
  curl -fsS -H "authorization: Bearer $KEY" -H "content-type: text/plain" --data-binary @/tmp/c8.txt \
    "http://127.0.0.1:8080/v1/problems/maxcut/solve?seed=0&max_rounds=20" > /tmp/solve.json
  cat /tmp/solve.json | head -c 400; echo
  grep -q "\"objective\":8\(\.0\)\?[,}]" /tmp/solve.json && echo "ok   C8 cut = 8 (optimal)" || { echo "FAIL C8 cut is not 8"; exit 1; }
  code=$(curl -s -o /dev/null -w "%{http_code}" -H "content-type: text/plain" --data-binary @/tmp/c8.txt http://127.0.0.1:8080/v1/problems/maxcut/solve)
  test "$code" = 401 && echo "ok   mutation without a key gets 401" || { echo "FAIL got $code without a key"; exit 1; }
  kill $server
'
echo "container-test: passed"
