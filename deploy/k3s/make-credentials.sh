#!/bin/sh
# Writes credentials.env beside kustomization.yaml: a random NATS password for every user that
# ../nats/permissions.conf names (each `password: $NATS_…_PASSWORD` in it), so the per-session users
# of gen-permissions.mjs --session M/S get theirs too. An existing file is kept; only the variables
# it lacks are added, so run it again after regenerating permissions.conf. kustomize turns it into
# the Secret shrooms-nats-credentials, which the NATS nodes and the services read.
set -eu
cd "$(dirname "$0")"
pw() { sh ../nats/make-password.sh; }
vars=$(grep -o 'password: \$NATS_[A-Z0-9_]*_PASSWORD' ../nats/permissions.conf | sed 's/^password: \$//')
umask 077
[ -f credentials.env ] || : > credentials.env
added=0
for var in $vars; do
  if ! grep -q "^$var=" credentials.env; then
    echo "$var=$(pw)" >> credentials.env
    added=$((added + 1))
  fi
done
echo "wrote $(pwd)/credentials.env ($added new password(s))"
