/** How this CLI runs itself again: for MCP configs and service units. */
import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';

/**
 * The bundled CLI beside these sources, when this process runs them (`pnpm dev`, tests under tsx):
 * what a person runs — units, MCP configs — is always the built JavaScript (scripts/build.mjs).
 */
function builtBeside(main: string): string | undefined {
  const tail = join('src', 'main.ts');
  if (!main.endsWith(`${sep}${tail}`)) return undefined;
  return join(main.slice(0, -tail.length), 'bundle', 'main.js');
}

/** How to run this same program again from any directory (absolute loader paths). */
export function selfCommand(): { command: string; args: string[] } {
  const main = process.argv[1]!;
  const built = builtBeside(main);
  if (built) {
    if (!existsSync(built)) process.stderr.write(`note: ${built} is not built yet; \`node scripts/build.mjs\` builds it\n`);
    return { command: process.execPath, args: [built] };
  }
  const args: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const abs = (spec: string) => (/^[./]|^file:/.test(spec) ? spec : import.meta.resolve(spec));
    if (a === '--import' && argv[i + 1]) {
      args.push('--import', abs(argv[++i]!));
    } else if (a.startsWith('--import=')) {
      args.push(`--import=${abs(a.slice('--import='.length))}`);
    } else args.push(a);
  }
  return { command: process.execPath, args: [...args, main] };
}

/** A word for a POSIX shell (quoted only when it needs to be). */
export const sh = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
