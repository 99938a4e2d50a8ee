#!/bin/sh
# Writes .env beside docker-compose.yml with a random NATS password per user (once; an existing
# .env is kept). The NATS nodes and the services read the same values.
set -eu
cd "$(dirname "$0")"
if [ -f .env ]; then echo ".env exists; keeping it"; exit 0; fi
pw() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
umask 077
{
  echo "# NATS passwords (generated $(date -u +%Y-%m-%dT%H:%M:%SZ)); keep this file private."
  for user in GATEWAY GUARD SCHEDULER BRIDGE ADMIN; do echo "NATS_${user}_PASSWORD=$(pw)"; done
  echo "# This machine's name on the mesh (MACHINE of MACHINE/SESSION)."
  echo "SHROOMS_MACHINE=$(hostname -s 2>/dev/null || hostname)"
  echo "# This machine's WireGuard address: serve the mesh there (loopback only when empty)."
  echo "SHROOMS_MESH_ADDRESS="
  echo "# Traces: uncomment with --profile traces"
  echo "# OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"
} > .env
echo "wrote $(pwd)/.env"
