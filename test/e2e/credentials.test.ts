/**
 * The NATS passwords the deploy scripts generate are strings to every consumer. nats-server parses a
 * `$VARIABLE` value as a config value, so an all-hex password with a leading digit was read as a
 * number (or refused): about one stack in four failed to start. Here hundreds are generated the way
 * people generate them — make-password.sh, make-credentials.sh (k3s), make-env.sh (compose) — and
 * every one must look like the documented format and log in to a real nats-server that reads it
 * from its environment.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { REPO_ROOT, startNatsServer, tempDirSync } from '@shrooms/testing';
import { afterAll, describe, expect, it } from 'vitest';

const FORMAT = /^pw[0-9a-f]{48}$/;
const temp = tempDirSync('shrooms-credentials');
const work = temp.path;
afterAll(() => temp.remove());

function sh(script: string, cwd = work): string {
  return execFileSync('sh', ['-c', script], { cwd, encoding: 'utf8', env: { ...process.env, SHROOMS_MACHINE: 'laptop' } });
}

const envValues = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => /^NATS_\w+_PASSWORD=(.*)$/.exec(l)?.[1])
    .filter((v): v is string => v !== undefined);

/** Passwords from each generator, run from a copy of deploy/ (the scripts write beside themselves). */
function generate(): string[] {
  cpSync(join(REPO_ROOT, 'deploy'), join(work, 'deploy'), { recursive: true });
  const out: string[] = [];
  out.push(...sh('for i in $(seq 300); do sh deploy/nats/make-password.sh; done').trim().split('\n'));
  const k3s = join(work, 'deploy/k3s');
  for (let i = 0; i < 20; i++) {
    rmSync(join(k3s, 'credentials.env'), { force: true });
    sh('sh make-credentials.sh >/dev/null', k3s);
    out.push(...envValues(readFileSync(join(k3s, 'credentials.env'), 'utf8')));
  }
  const compose = join(work, 'deploy/compose');
  for (let i = 0; i < 6; i++) {
    rmSync(join(compose, '.env'), { force: true });
    sh('sh make-env.sh >/dev/null', compose);
    out.push(...envValues(readFileSync(join(compose, '.env'), 'utf8')));
  }
  return out;
}

describe('generated NATS credentials', () => {
  const passwords = generate();

  it('come out in the documented format, all different', () => {
    expect(passwords.length).toBe(300 + 20 * 6 + 6 * 6);
    expect(passwords.filter((p) => !FORMAT.test(p))).toEqual([]);
    expect(new Set(passwords).size).toBe(passwords.length);
  });

  it('each logs in to a nats-server that reads it from its environment as $VARIABLE', async () => {
    const conf = join(work, 'users.conf');
    const users = passwords.map((_, i) => `{ user: "u${i}", password: $P_${i} }`);
    execFileSync('sh', ['-c', `cat > ${conf}`], { input: `authorization { users: [\n${users.join('\n')}\n] }\n` });
    const env = Object.fromEntries(passwords.map((p, i) => [`P_${i}`, p]));
    const server = await startNatsServer({ args: ['-c', conf], env });
    try {
      const refused: number[] = [];
      for (const [i, pass] of passwords.entries()) {
        const nc = await connect({ servers: server.url, user: `u${i}`, pass, reconnect: false }).catch(() => null);
        if (!nc) refused.push(i);
        else await nc.close();
      }
      expect(refused).toEqual([]);
      // The check can fail: a password the server did not read as that string is refused.
      await expect(connect({ servers: server.url, user: 'u0', pass: `${passwords[0]}x`, reconnect: false })).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });
});
