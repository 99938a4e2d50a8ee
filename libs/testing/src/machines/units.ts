/**
 * Reads the systemd units that `shrooms-agent mesh join` writes, the way systemd would start them:
 * `EnvironmentFile=` (a leading `-` makes it optional), `Environment=`, and `ExecStart=` split into
 * words as a shell would (the CLI quotes words with `'…'`), with `%i`/`%I` for the instance.
 */
import { existsSync, readFileSync } from 'node:fs';

export interface UnitCommand {
  argv: string[];
  env: Record<string, string>;
}

function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2]!);
  return out;
}

export function readEnvFile(path: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return env;
}

export function readUnit(path: string, instance = ''): UnitCommand {
  const text = readFileSync(path, 'utf8').replaceAll('%i', instance).replaceAll('%I', instance);
  const env: Record<string, string> = {};
  let argv: string[] | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const [key, ...rest] = line.split('=');
    const value = rest.join('=');
    if (key === 'EnvironmentFile') {
      const optional = value.startsWith('-');
      const file = optional ? value.slice(1) : value;
      if (!existsSync(file)) {
        if (optional) continue;
        throw new Error(`${path}: EnvironmentFile ${file} does not exist`);
      }
      Object.assign(env, readEnvFile(file));
    } else if (key === 'Environment') {
      const [k, ...v] = value.split('=');
      env[k!] = v.join('=');
    } else if (key === 'ExecStart') argv = words(value);
  }
  if (!argv?.length) throw new Error(`${path}: no ExecStart`);
  return { argv, env };
}
