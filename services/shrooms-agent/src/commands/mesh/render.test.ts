import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirSync } from '@shrooms/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { natsServerPath } from './nats-binary.js';
import { DEFAULT_PORTS, defaultServices, newPassword, withMachine, type Machine, type MeshFile } from './model.js';
import { permissionsFor } from './permissions.js';
import { renderMachine } from './render.js';

const temp = tempDirSync('shrooms-mesh-render');
const dir = temp.path;
afterAll(() => temp.remove());

const KEY = (c: string) => `${c.repeat(43)}=`;
const machine = (name: string, n: number, role: Machine['role'] = 'always-on'): Machine => ({
  name,
  address: `100.64.0.${n}`,
  publicKey: KEY(String.fromCharCode(64 + n)),
  role,
  services: defaultServices(role),
});
const mesh: MeshFile = {
  version: 1,
  mesh: 'home',
  ports: { ...DEFAULT_PORTS },
  routePassword: newPassword(),
  machines: [machine('homeserver', 2), machine('pi5', 3), machine('nas', 4), machine('laptop', 1, 'intermittent')],
};

async function render(name: string, sessions: string[] = []) {
  const self = mesh.machines.find((m) => m.name === name)!;
  const { permissions, logins } = await permissionsFor(name, dir, sessions);
  const files = renderMachine({
    mesh,
    self,
    dir,
    wgInterface: 'wg0',
    cli: ['shrooms-agent'],
    natsServer: 'nats-server',
    permissions,
    logins,
  });
  return new Map(files.map((f) => [f.path, f]));
}

describe('mesh join files', () => {
  it.each([['homeserver'], ['laptop']])("give %s a NATS config nats-server accepts, with the machine's passwords", async (name) => {
    const files = await render(name, ['webapp', 'notes']);
    for (const f of ['nats.conf', 'permissions.conf']) writeFileSync(join(dir, f), files.get(f)!.text);
    const env = Object.fromEntries(
      files
        .get('secrets.env')!
        .text.trim()
        .split('\n')
        .map((l) => l.split('=') as [string, string]),
    );
    const r = spawnSync(natsServerPath(), ['-t', '-c', join(dir, 'nats.conf')], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    expect(r.stderr + r.stdout).not.toMatch(/error/i);
    expect(r.status).toBe(0);
  });

  it("log each session's bridge in as that session's own NATS user, never as the machine-wide bridge", async () => {
    const files = await render('laptop', ['webapp', 'notes']);
    expect(files.get('bridge.env')!.text).not.toMatch(/NATS_USER|NATS_PASS/);
    // Beside another bridge of its session (one started by hand), a unit's waits rather than exits.
    expect(files.get('bridge.env')!.text).toMatch(/^BRIDGE_STANDBY=1$/m);
    const secrets = files.get('secrets.env')!.text;
    const permissions = files.get('permissions.conf')!.text;
    for (const s of ['webapp', 'notes']) {
      const login = files.get(`logins/${s}.env`)!;
      expect(login.secret).toBe(true);
      expect(login.text).toMatch(new RegExp(`^NATS_USER=session-${s}$`, 'm'));
      const pass = /^NATS_PASS=(.+)$/m.exec(login.text)![1]!;
      expect(secrets).toContain(`NATS_SESSION_${s.toUpperCase()}_PASSWORD=${pass}\n`);
      expect(permissions).toContain(`user: "session-${s}"`);
    }
    expect(files.get('units/shrooms-bridge@.service')!.text).toMatch(/EnvironmentFile=.*\/logins\/%i\.env\n/);
  });

  it('give always-on machines JetStream and the intermittent one none', async () => {
    expect((await render('homeserver')).get('nats.conf')!.text).toMatch(/^jetstream \{/m);
    expect((await render('laptop')).get('nats.conf')!.text).not.toMatch(/^jetstream/m);
  });

  it('run NATS clients on loopback only and routes on the mesh address only', async () => {
    const conf = (await render('pi5')).get('nats.conf')!.text;
    expect(conf).toMatch(/^listen: "127\.0\.0\.1:4222"$/m);
    expect(conf).toMatch(/^ {2}listen: "100\.64\.0\.3:6222"$/m);
    for (const m of mesh.machines) expect(conf).toContain(`@${m.address}:6222`);
  });

  it('bind the gateway to loopback and the mesh address and read peers live from wg show', async () => {
    const env = (await render('laptop')).get('gateway.env')!.text;
    expect(env).toMatch(/^GATEWAY_HOST=127\.0\.0\.1,100\.64\.0\.1$/m);
    expect(env).toMatch(/^SHROOMS_WG_INTERFACE=wg0$/m);
    expect(env).not.toMatch(/PRIVATE|DUMP/);
    expect(env).toMatch(/^SHROOMS_REPLICAS=3$/m);
  });

  it("name every other machine's public key for the gateway, never its own", async () => {
    const names = (await render('laptop')).get('wg-names.yaml')!.text;
    expect(names).toContain(`"${KEY('B')}": homeserver`);
    expect(names).not.toContain(KEY('A'));
  });

  it('start the scheduler only on always-on machines, and no guard unless the mesh file lists one', async () => {
    const laptop = await render('laptop');
    expect([...laptop.keys()].filter((p) => p.startsWith('units/'))).toEqual([
      'units/shrooms-nats.service',
      'units/shrooms-gateway.service',
      'units/shrooms-bridge@.service',
    ]);
    const home = await render('homeserver');
    expect(home.has('units/shrooms-scheduler.service')).toBe(true);
    // Gateways admit in their own process (GATEWAY_GUARD=local): nothing would ask a guard.
    expect(home.has('units/shrooms-guard.service')).toBe(false);
    const nas = mesh.machines.find((m) => m.name === 'nas')!;
    nas.services = [...nas.services, 'guard'];
    try {
      expect((await render('nas')).has('units/shrooms-guard.service')).toBe(true);
    } finally {
      nas.services = defaultServices('always-on');
    }
  });

  it('refuse a second machine on an address or key already in the mesh', () => {
    expect(() => withMachine(mesh, { ...machine('other', 2), publicKey: KEY('Z') })).toThrow(/already machine homeserver's/);
    expect(() => withMachine(mesh, { ...machine('other', 9), publicKey: KEY('B') })).toThrow(/public key is already machine homeserver's/);
  });
});
