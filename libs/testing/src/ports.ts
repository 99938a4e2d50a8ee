/**
 * Ports for the services a test starts, known before they start (a gateway's URL goes into the
 * environment of the bridges beside it; a restarted node comes back on the same ports).
 *
 * A port the kernel hands out (listen on port 0) is in its ephemeral range, the range every outgoing
 * connection's local port is drawn from too: between the check and the service's own listen, any of
 * the suite's hundreds of connections (or another test's listen on 0) could take it, and the service
 * fails with EADDRINUSE. So the port is drawn below that range, where the kernel never hands one out
 * by itself, from a block of its own for each test worker, and never twice in one process.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const BLOCK = 1000;
const FIRST = 10_000;

/** The low end of the kernel's ephemeral range (Linux), or undefined where it cannot be read. Read once. */
const ephemeralLow = ((): number | undefined => {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > FIRST + BLOCK ? low : undefined;
  } catch {
    return undefined;
  }
})();

/** Listens on `port` (0: any) and closes again; the port it had, or undefined when it was taken. */
function probe(port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, host, () => {
      const got = (srv.address() as { port: number }).port;
      srv.close(() => resolve(got));
    });
  });
}

/**
 * A port free on `host` now, below the kernel's ephemeral range, in this worker's block
 * (`VITEST_POOL_ID`), not given before by this process. Where the range is unknown, one the
 * kernel picks.
 */
export const freePort = portPicker();

/** A `freePort` with a memory of its own (a test's, apart from the process's). */
export function portPicker(): (host?: string) => Promise<number> {
  const given = new Set<number>();
  return async (host = '127.0.0.1') => {
    const low = ephemeralLow;
    if (low === undefined) return (await probe(0, host))!;
    const blocks = Math.floor((low - FIRST) / BLOCK);
    const worker = Number(process.env.VITEST_POOL_ID ?? process.pid) || 0;
    const base = FIRST + (worker % blocks) * BLOCK;
    const start = Math.floor(Math.random() * BLOCK);
    for (let i = 0; i < BLOCK; i++) {
      const port = base + ((start + i) % BLOCK);
      if (given.has(port)) continue;
      if ((await probe(port, host)) === port) {
        given.add(port);
        return port;
      }
    }
    throw new Error(`no free port on ${host} in ${base}–${base + BLOCK - 1}`);
  };
}
