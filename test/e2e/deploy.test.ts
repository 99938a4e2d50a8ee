/**
 * The deploy checks (scripts/check-deploy.mjs) pass on the repository's deploy files and fail —
 * naming the file and the field — when a copy is broken on purpose: a Kubernetes manifest with a
 * wrong type, one with a field Kubernetes does not know, a dangling Secret key, a compose service
 * with an unknown key, a NATS config that does not parse, a bridge unit whose CLI path is not built.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUCKETS, SERVICE_NAMES, subjects, type BridgeOp, type NotifyKind } from '@shrooms/protocol';
import { REPO_ROOT, tempDirSync, type TempDir } from '@shrooms/testing';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(REPO_ROOT, 'scripts/check-deploy.mjs');
const temps: TempDir[] = [];

afterAll(async () => {
  await Promise.all(temps.map((t) => t.remove()));
});

function check(only: string, deployDir?: string): { code: number | null; out: string } {
  const args = [SCRIPT, '--only', only, ...(deployDir ? ['--deploy-dir', deployDir] : [])];
  const r = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A copy of deploy/ with one file changed by `edit`. */
function brokenCopy(file: string, edit: (text: string) => string): string {
  const temp = tempDirSync('shrooms-deploy-broken');
  temps.push(temp);
  const dir = temp.path;
  const deploy = join(dir, 'deploy');
  cpSync(join(REPO_ROOT, 'deploy'), deploy, { recursive: true });
  const path = join(deploy, file);
  const before = readFileSync(path, 'utf8');
  const after = edit(before);
  expect(after).not.toBe(before);
  writeFileSync(path, after);
  return deploy;
}

describe('check-deploy', () => {
  it('passes on the repository deploy files (static checks)', () => {
    const { code, out } = check('docker,compose,k8s,nats,systemd');
    expect(out).toMatch(/deploy check: \d+ ok, 0 failed/);
    expect(code).toBe(0);
  });

  it('fails a Deployment whose replicas is not a number, naming the file and field', () => {
    const deploy = brokenCopy('k3s/guard.yaml', (t) => t.replace(/^ {2}replicas: 2$/m, '  replicas: two'));
    const { code, out } = check('k8s', deploy);
    expect(code).toBe(1);
    expect(out).toMatch(/FAIL deploy\/k3s Deployment\/guard: \/spec\/replicas must be integer/);
  });

  it('fails a manifest with a field Kubernetes does not know', () => {
    const deploy = brokenCopy('k3s/scheduler.yaml', (t) =>
      t.replace('          imagePullPolicy: IfNotPresent', '          imagePullPolicy: IfNotPresent\n          imagePulPolicy: Always'),
    );
    const { code, out } = check('k8s', deploy);
    expect(code).toBe(1);
    expect(out).toMatch(
      /FAIL deploy\/k3s Deployment\/scheduler: \/spec\/template\/spec\/containers\/0\/imagePulPolicy is not a field of Deployment/,
    );
  });

  it('fails a container that reads a Secret key nobody writes', () => {
    const deploy = brokenCopy('k3s/gateway.yaml', (t) => t.replace('key: NATS_GATEWAY_PASSWORD', 'key: NATS_GATEWAY_PASSWD'));
    const { code, out } = check('k8s', deploy);
    expect(code).toBe(1);
    expect(out).toMatch(
      /FAIL deploy\/k3s consistency: DaemonSet\/gateway container gateway: env NATS_PASS: Secret shrooms-nats-credentials\S* has no key NATS_GATEWAY_PASSWD/,
    );
  });

  it('fails a NATS node under a memory limit without GOMEMLIMIT below it', () => {
    const over = brokenCopy('k3s/nats.yaml', (t) => t.replace('value: 460MiB', 'value: 600MiB'));
    expect(check('k8s', over).out).toMatch(
      /FAIL deploy\/k3s consistency: StatefulSet\/nats container nats: GOMEMLIMIT 600MiB is not below the memory limit 512Mi/,
    );
    const none = brokenCopy('k3s/nats.yaml', (t) => t.replace(/^ {12}- name: GOMEMLIMIT\n {14}value: 460MiB\n/m, ''));
    const r = check('k8s', none);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/StatefulSet\/nats container nats: memory limit 512Mi but no GOMEMLIMIT/);
  });

  it('fails a compose service with a key the compose schema does not have', () => {
    const deploy = brokenCopy('compose/docker-compose.yml', (t) =>
      t.replace('  bridge-demo:\n', '  bridge-demo:\n    restart_policy: always\n'),
    );
    const { code, out } = check('compose', deploy);
    expect(code).toBe(1);
    expect(out).toMatch(
      /FAIL deploy\/compose\/docker-compose.yml schema: \/services\/bridge-demo must NOT have additional properties \(restart_policy\)/,
    );
  });

  it('fails a bridge unit whose default CLI path the build does not make', () => {
    const deploy = brokenCopy('systemd/shrooms-bridge@.service', (t) => t.replace('/bundle/main.js', '/bundle/main.cjs'));
    const { code, out } = check('systemd', deploy);
    expect(code).toBe(1);
    expect(out).toMatch(
      /shrooms-bridge@\.service: SHROOMS_CLI defaults to %h\/shrooms\/services\/shrooms-agent\/bundle\/main\.cjs, which the build does not make/,
    );
  });

  it('fails a NATS config that nats-server -t rejects', () => {
    const deploy = brokenCopy('nats/nats.conf', (t) => t.replace('max_payload: 1MB', 'max_payload: {'));
    const { code, out } = check('nats', deploy);
    expect(code).toBe(1);
    expect(out).toMatch(/FAIL deploy\/nats\/nats.conf with compose nats-1/);
  });
});

describe('docs/operators.md', () => {
  it('names every subject, stream, bucket and service of libs/protocol', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/operators.md'), 'utf8');
    const ops: BridgeOp[] = ['deliver', 'cancel', 'update', 'control'];
    const kinds: NotifyKind[] = ['stalled', 'held', 'expired', 'reminder'];
    const names = [
      ...ops.map((op) => subjects.bridge('M', 'S', op)),
      subjects.guardAdmit(),
      subjects.guardControl(),
      ...(['create', 'list', 'cancel'] as const).map((op) => subjects.scheduler(op)),
      subjects.signal('M', 'S'),
      ...kinds.map((k) => subjects.notify('M', 'S', k)),
      subjects.refusal('M', 'S'),
      subjects.bridgeInbox('M'),
      ...Object.values(BUCKETS).flatMap((b) => [b, `KV_${b}`]),
      ...Object.values(SERVICE_NAMES),
    ];
    const missing = names.filter((n) => !doc.includes(`\`${n}`));
    expect(missing).toEqual([]);
  });
});
