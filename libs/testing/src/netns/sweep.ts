/**
 * What netns.ts and the machines rig both leave behind when a run crashes: network namespaces
 * named with the run's prefix, with processes still inside. Swept at the next start.
 */
import { spawnSync } from 'node:child_process';

/** The namespaces named `PREFIX-…`. */
export function namespacesOf(prefix: string): string[] {
  const list = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  return list
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((ns) => ns.startsWith(`${prefix}-`));
}

/** Deletes every namespace named `PREFIX-…`, killing what still runs inside it first (so nothing holds it). */
export function sweepNamespaces(prefix: string): void {
  for (const ns of namespacesOf(prefix)) {
    const pids = (spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout ?? '').split(/\s+/).filter(Boolean);
    for (const pid of pids) spawnSync('kill', ['-9', pid]);
    spawnSync('ip', ['netns', 'del', ns]);
  }
}
