import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The generator in a clone, or the copy an installed package carries (its prepack puts it in dist/deploy). */
function generator(): URL {
  const inClone = new URL('../../../../../deploy/nats/gen-permissions.mjs', import.meta.url);
  return existsSync(fileURLToPath(inClone)) ? inClone : new URL('../../deploy/gen-permissions.mjs', import.meta.url);
}

/**
 * permissions.conf of one machine from the one generator of NATS users and permissions,
 * deploy/nats/gen-permissions.mjs (consumed, not copied: its rules are the deployment's rules).
 * The machine's bridges log in as `bridge`, scoped to the machine.
 */
export async function permissionsFor(machine: string, dir: string): Promise<string> {
  const gen = (await import(String(generator()))) as {
    renderPermissions(o: { local: string; admin?: boolean; command: string }): string;
  };
  return gen.renderPermissions({ local: machine, command: `--local ${machine} --out ${join(dir, 'permissions.conf')}` });
}
