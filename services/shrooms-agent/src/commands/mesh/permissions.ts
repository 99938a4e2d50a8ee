import { join } from 'node:path';

/**
 * permissions.conf of one machine from the one generator of NATS users and permissions,
 * deploy/nats/gen-permissions.mjs (consumed, not copied: its rules are the deployment's rules).
 * The machine's bridges log in as `bridge`, scoped to the machine.
 */
export async function permissionsFor(machine: string, dir: string): Promise<string> {
  const gen = (await import(String(new URL('../../../../../deploy/nats/gen-permissions.mjs', import.meta.url)))) as {
    renderPermissions(o: { local: string; admin?: boolean; command: string }): string;
  };
  return gen.renderPermissions({ local: machine, command: `--local ${machine} --out ${join(dir, 'permissions.conf')}` });
}
