/**
 * The memory job on other Node versions than the one running the bench (`--node 22,24`): people run
 * our processes on Node 22 and 24, whose V8s size and give back their heaps differently. Each
 * version's job is this bench's own `--memory-figures`, run by that Node (installed once from the npm
 * registry by scripts/node-versions.mjs) with it first on PATH, so every process it starts runs on it.
 * Its figures join the run's under `<key>@node<version>`; aims.ts judges the memory aims on each.
 */
import { spawn, spawnSync } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './child.js';
import { onNode, type Figure } from './figures.js';

type Log = (line: string) => void;

export interface OtherNode {
  version: string;
  bin: string;
}

/**
 * Exact versions for `--node` values, each with its binary (installed when missing), but not this
 * Node; run before anything is measured, so a wrong value or a failed install stops the bench at once.
 */
export function nodeBinaries(values: string[], log: Log): OtherNode[] {
  if (values.length === 0) return [];
  const script = join(REPO_ROOT, 'scripts', 'node-versions.mjs');
  const r = spawnSync(process.execPath, [script, ...values], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(r.stderr.trim().split('\n').at(-1) || `${script} exited with ${r.status}`);
  if (r.stderr) log(r.stderr.trimEnd());
  return r.stdout
    .trim()
    .split('\n')
    .map((bin) => ({ bin, version: spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '') }))
    .filter((n) => `v${n.version}` !== process.version);
}

/**
 * Runs the memory job on each of `nodes` and returns its figures, keyed by onNode. A Node whose job
 * fails is said so and left out (its aims are then missing from the run): the figures measured so
 * far are not lost to it.
 */
export async function memoryOnOtherNodes(nodes: OtherNode[], quick: boolean, log: Log): Promise<Record<string, Figure>> {
  const out: Record<string, Figure> = {};
  for (const { version, bin } of nodes) {
    log(`memory: the memory job again on Node ${version}`);
    try {
      const figures = await runOn(bin, quick, log);
      for (const [key, f] of Object.entries(figures)) out[onNode(key, version)] = { ...f, title: `Node ${version}: ${f.title}` };
    } catch (err) {
      log(`memory: not measured on Node ${version}: ${(err as Error).message}`);
    }
  }
  return out;
}

function runOn(bin: string, quick: boolean, log: Log): Promise<Record<string, Figure>> {
  const child = spawn(bin, [join(REPO_ROOT, 'bench', 'dist', 'main.js'), '--memory-figures', ...(quick ? ['--quick'] : [])], {
    cwd: REPO_ROOT,
    env: { ...process.env, PATH: `${dirname(bin)}${delimiter}${process.env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  // Its log, line by line, indented under this one's.
  createInterface({ input: child.stderr }).on('line', (line) => log(`  ${line}`));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the memory job on ${bin} exited with ${code}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Figure>);
      } catch (err) {
        reject(new Error(`the memory job on ${bin} printed no figures: ${(err as Error).message}`));
      }
    });
  });
}
