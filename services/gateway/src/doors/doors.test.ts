import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@shrooms/runtime';
import { GatewayConfigSchema } from '../config.js';
import { Doors, registerDoors, type DoorOptions } from './doors.js';

const identify = (addr: string) =>
  addr === '127.0.0.1' ? { device: 'box', self: true } : addr === '100.64.0.2' ? { device: 'pi5.home', self: false } : undefined;

/** GATEWAY_ALLOWED_HOSTS as the gateway's config reads it, for the door (as app.ts passes it). */
const allowedHosts = (list: string) =>
  loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', GATEWAY_ALLOWED_HOSTS: list }).GATEWAY_ALLOWED_HOSTS;

async function app(extraHosts: DoorOptions['extraHosts'] = allowedHosts('laptop.home')) {
  const a = Fastify();
  a.removeAllContentTypeParsers();
  a.addContentTypeParser('*', { parseAs: 'string' }, (_r, b, done) => done(null, b));
  registerDoors(a, new Doors(identify, { machine: 'box', publicUrl: 'http://box.home:7387', extraHosts }));
  let changed = 0;
  a.post('/a2a/s', async () => ({ changed: ++changed }));
  a.post('/a2a/s/message::send', async () => ({ changed: ++changed }));
  a.get('/agents', async () => ({ agents: [] }));
  a.get('/healthz', async () => ({ ok: true }));
  return a;
}

const json = { 'content-type': 'application/json' };

describe('the door in front of every route', () => {
  it('refuses a source the mesh does not name on every route but health', async () => {
    const a = await app();
    for (const [method, url] of [
      ['GET', '/agents'],
      ['POST', '/a2a/s'],
    ] as const) {
      const res = await a.inject({ method, url, remoteAddress: '203.0.113.9', headers: json, payload: '{}' });
      expect(res.statusCode, url).toBe(method === 'POST' ? 200 : 403); // JSON-RPC answers errors in the body
      expect(res.body).toContain('UNKNOWN_DEVICE');
    }
    expect((await a.inject({ url: '/healthz', remoteAddress: '203.0.113.9' })).statusCode).toBe(200);
  });

  it('refuses a Host that is not one of its names (DNS rebinding), on reads too', async () => {
    const a = await app();
    const res = await a.inject({ url: '/agents', remoteAddress: '127.0.0.1', headers: { host: 'attacker.example' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.details[0]).toMatchObject({ reason: 'CROSS_SITE_REFUSED', metadata: { check: 'host' } });
    for (const host of ['localhost:7387', 'box:7387', 'box.home', 'laptop.home', '127.0.0.1:7387', '[::1]:7387'])
      expect((await a.inject({ url: '/agents', remoteAddress: '127.0.0.1', headers: { host } })).statusCode, host).toBe(200);
  });

  it('answers to the names GATEWAY_ALLOWED_HOSTS lists with a port or in IPv6 brackets', async () => {
    const a = await app(allowedHosts('Laptop.Home:7387, [FD00::1]:7387, [fd00::2], fd00::3'));
    for (const host of ['laptop.home:7387', 'laptop.home', '[fd00::1]:7387', '[fd00::2]:80', '[fd00::3]:7387'])
      expect((await a.inject({ url: '/agents', remoteAddress: '127.0.0.1', headers: { host } })).statusCode, host).toBe(200);
  });

  it('refuses to start with a GATEWAY_ALLOWED_HOSTS entry that is no host name, saying which', () => {
    for (const entry of ['http://laptop.home/', 'laptop.home/dashboard', '*.home', '[fd00::1', '[laptop]:7387']) {
      expect(() => allowedHosts(`box.home,${entry}`), entry).toThrow(ConfigError);
      expect(() => allowedHosts(`box.home,${entry}`), entry).toThrow(`"${entry}"`);
    }
  });

  it('refuses a state change from another origin, or a browser page’s body that is not JSON, and changes nothing', async () => {
    const a = await app();
    const cases = [
      { origin: 'http://attacker.example', ...json },
      { origin: 'null', ...json },
      { origin: 'http://attacker.example', 'content-type': 'text/plain' }, // a cross-site form or no-cors fetch
      { origin: 'http://localhost', 'content-type': 'application/x-www-form-urlencoded' }, // even from its own page
      { 'sec-fetch-site': 'cross-site', 'content-type': 'multipart/form-data; boundary=x' }, // a browser that sent no Origin
    ];
    for (const headers of cases) {
      const res = await a.inject({ method: 'POST', url: '/a2a/s', remoteAddress: '127.0.0.1', headers, payload: '{}' });
      expect(res.statusCode, JSON.stringify(headers)).toBe(200); // JSON-RPC path: errors in the body
      expect(res.json().error.code, JSON.stringify(headers)).toBe(-32068);
    }
  });

  it('answers ContentTypeNotSupported to a client that is no browser page sending a body that is not JSON, and changes nothing', async () => {
    const a = await app();
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
      const res = await a.inject({ method: 'POST', url: '/a2a/s', remoteAddress: '127.0.0.1', headers, payload: '{"jsonrpc":"2.0"}' });
      expect(res.json().error, JSON.stringify(headers)).toMatchObject({ code: -32005, data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] });
    }
    const rest = await a.inject({
      method: 'POST',
      url: '/a2a/s/message:send',
      remoteAddress: '127.0.0.1',
      headers: { 'content-type': 'text/plain', 'sec-fetch-site': 'same-origin' },
      payload: '{}',
    });
    expect(rest.statusCode).toBe(400);
    expect(rest.json().error).toMatchObject({ status: 'INVALID_ARGUMENT', details: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] });
    const ok = await a.inject({ method: 'POST', url: '/a2a/s', remoteAddress: '127.0.0.1', headers: json, payload: '{}' });
    expect(ok.json()).toEqual({ changed: 1 }); // nothing before it reached the route
  });

  it('lets a JSON state change from its own origin through', async () => {
    const a = await app();
    const ok = await a.inject({
      method: 'POST',
      url: '/a2a/s',
      remoteAddress: '127.0.0.1',
      headers: { host: 'localhost:7387', origin: 'http://localhost:7387', 'content-type': 'application/a2a+json; charset=utf-8' },
      payload: '{}',
    });
    expect(ok.json()).toEqual({ changed: 1 });
  });
});
