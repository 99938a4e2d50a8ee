#!/bin/sh
# Writes credentials.env beside kustomization.yaml with a random NATS password per user (once; an
# existing file is kept). kustomize turns it into the Secret shrooms-nats-credentials.
set -eu
cd "$(dirname "$0")"
if [ -f credentials.env ]; then echo "credentials.env exists; keeping it"; exit 0; fi
pw() { sh ../nats/make-password.sh; }
umask 077
for user in GATEWAY GUARD SCHEDULER BRIDGE ADMIN; do echo "NATS_${user}_PASSWORD=$(pw)"; done > credentials.env
echo "wrote $(pwd)/credentials.env"
