#!/bin/sh
# Prints one random NATS password: "pw" and 48 hex digits (192 bits).
#
# Why the letters in front: nats-server substitutes $VARIABLE references by parsing the variable's
# value as a config value, so a bare hex string with a leading digit ("3e1f…", "12ab…") is read as a
# number — or refused with a parse error — instead of a string. Letters first, then only [0-9a-f], is
# a plain string to nats-server, a shell, a dotenv file, a Kubernetes Secret and a nats:// URL alike.
set -eu
printf 'pw%s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
