/** How this CLI runs itself again: for MCP configs and service units. */

/** How to run this same program again from any directory (absolute loader paths). */
export function selfCommand(): { command: string; args: string[] } {
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
  return { command: process.execPath, args: [...args, process.argv[1]!] };
}

/** A word for a POSIX shell (quoted only when it needs to be). */
export const sh = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
