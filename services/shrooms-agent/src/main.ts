#!/usr/bin/env node
/**
 * `shrooms-agent`: one command for people and sessions. Each subcommand lives in commands/ and
 * loads its service only when run.
 */
import { initTelemetry, releaseMemoryWhenIdle } from '@shrooms/runtime';
import { COMMANDS, usage } from './commands/index.js';
import { shellEnv, takeCliName } from './config.js';

/** Commands that talk to this machine's gateway: they find `up`'s mesh when nothing says where. */
const CLIENTS = new Set(['a2a', 'mcp', 'config']);

/**
 * Usage lines, errors and hints say `shrooms-agent …`; when the person typed `./shrooms …`, they
 * say that instead. Only stderr (a person's stream) and help on stdout are rewritten: stdout with
 * data (task texts, --json) is never touched.
 */
function speakAs(name: string, helpOnly: boolean): void {
  if (name === 'shrooms-agent') return;
  const word = /(^|[\s`'"(])shrooms-agent(?=[\s:`'")]|$)/gm;
  for (const stream of helpOnly ? [process.stdout, process.stderr] : [process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      write(typeof chunk === 'string' ? chunk.replace(word, `$1${name}`) : chunk, ...rest)) as typeof stream.write;
  }
}

async function main(argv: string[]): Promise<number> {
  speakAs(takeCliName(), argv.length === 0 || argv.includes('--help') || argv.includes('-h') || argv[0] === 'help');
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 1;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`shrooms-agent: unknown command "${name}"\n\n${usage()}`);
    return 1;
  }
  // The one place the environment is completed, so every reader of it (and a session started from
  // `config`'s output) sees the same gateway and machine.
  if (CLIENTS.has(name)) Object.assign(shellEnv(), await (await import('./commands/local-mesh.js')).clientDefaults(shellEnv()));
  // Traces go out only when OTEL_* variables configure an exporter (spec §10).
  const flush = await initTelemetry(`shrooms-${name}`);
  // Services and the MCP server live as long as their session: on Node 24 they give memory back when quiet.
  releaseMemoryWhenIdle();
  const code = await cmd.run(rest);
  if (code !== -1) await flush();
  return code;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined && code !== -1) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`shrooms-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    // A service that failed to start may hold open connections: leave now, so supervisors restart it.
    process.exit(1);
  },
);
