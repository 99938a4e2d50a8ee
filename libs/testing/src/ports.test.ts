import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { freePort, portPicker } from './ports.js';

const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
const servers: Server[] = [];
const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
    servers.push(s);
  });

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

it('gives ports below the ephemeral range, never one twice, each free to listen on', async () => {
  const ports: number[] = [];
  for (let i = 0; i < 50; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(50);
  for (const p of ports) expect(p).toBeLessThan(low);
  // Every one of them can be listened on at once: none was handed out while in use.
  await Promise.all(ports.map(listen));
});

it('passes over a port something listens on', async () => {
  // Hold every port of this worker's block but one: that one is the answer.
  const pick = portPicker();
  const first = await pick();
  const base = first - (first % 1000);
  const spare = base + ((first - base + 500) % 1000);
  for (let p = base; p < base + 1000; p++) {
    if (p === spare) continue;
    await listen(p).catch(() => undefined);
  }
  expect(await pick()).toBe(spare);
});
