/**
 * One responder of the floor arm (its own process, like the gateway and the bridge are): hop1 passes
 * each request on to hop2 and relays the answer; hop2 answers with the bytes asked for. Plain core
 * NATS request-reply, no A2A, no ledger — what the same hops cost with nothing on them.
 *
 * Usage: floor-responder.ts hop1|hop2 NATS_URL
 */
import { connect } from '@nats-io/transport-node';
import { serve } from '../child.js';
import { benchLogin } from './login.js';
import { bytesOf, floorSubjects as S } from './floor-subjects.js';

const [role, url] = process.argv.slice(2);
if (role !== 'hop1' && role !== 'hop2') throw new Error('usage: floor-responder.ts hop1|hop2 NATS_URL');
const nc = await connect({ servers: url!, name: `bench floor ${role}`, ...benchLogin() });
const payloads = new Map<number, Uint8Array>();
const payload = (n: number) => {
  let p = payloads.get(n);
  if (!p) payloads.set(n, (p = new Uint8Array(n).fill(120)));
  return p;
};

if (role === 'hop1') {
  nc.subscribe(S.hop1RequestAll(), {
    callback: (err, msg) => {
      if (err) return;
      nc.request(S.hop2Request(bytesOf(msg.subject)), msg.data, { timeout: 10_000 }).then(
        (r) => msg.respond(r.data),
        () => msg.respond(new Uint8Array(0)),
      );
    },
  });
  nc.subscribe(S.hop1AcceptAll(), {
    callback: (err, msg) => {
      if (err) return;
      msg.respond(payload(bytesOf(msg.subject)));
      nc.publish(S.hop2Work(), msg.data);
    },
  });
} else {
  let counted = 0;
  nc.subscribe(S.hop2RequestAll(), {
    callback: (err, msg) => {
      if (!err) msg.respond(payload(bytesOf(msg.subject)));
    },
  });
  nc.subscribe(S.hop2Work(), {
    callback: (err) => {
      if (!err) counted++;
    },
  });
  nc.subscribe(S.hop2Count(), {
    callback: (err, msg) => {
      if (!err) msg.respond(String(counted));
    },
  });
}
await nc.flush();
serve(async () => undefined, { role });
