#!/usr/bin/env bash
# Installs (from Debian's packages) and starts a PostgreSQL server on loopback for the store's
# Postgres tests, and prints the URL they read (RLSOLVER_TEST_DATABASE_URL). Idempotent; used by
# .ci/run and `make postgres`. Needs root (or sudo) on a Debian machine.
set -euo pipefail
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
  as_root apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -V | tail -1)
if [ -z "$(ls /etc/postgresql/"$version" 2>/dev/null)" ]; then
  as_root pg_createcluster "$version" main >/dev/null
fi
as_root pg_ctlcluster "$version" main start >/dev/null 2>&1 || true
for _ in $(seq 30); do
  as_root su postgres -c "psql -qAtc 'SELECT 1'" >/dev/null 2>&1 && break
  sleep 1
done
as_root su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null
echo "postgres://postgres:postgres@127.0.0.1:5432/postgres"
