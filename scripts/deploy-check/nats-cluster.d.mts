/** Types of nats-cluster.mjs, for the TypeScript tests that start the deploy NATS config. */
import type { ChildProcess } from 'node:child_process';

export interface NatsNode {
  name: string;
  port: number;
  httpPort: number;
  clusterPort: number | null;
  file: string;
  url: string;
  monitorUrl: string;
  child: ChildProcess | undefined;
  stderr: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  start(): void;
  kill(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

export interface NatsCluster {
  dir: string;
  nodes: NatsNode[];
  /** Every node's client URL, comma-separated (what NATS_URL takes). */
  url: string;
  stop(): Promise<void>;
}

export function rewriteNatsConfig(
  text: string,
  opts: { port: number; httpPort: number; storeDir: string; clusterPort: number | null },
): string;

export function startNatsFromConfig(opts: {
  configFile: string;
  nodes?: number;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Picks each port (default: one the kernel hands out). */
  freePort?: () => Promise<number>;
}): Promise<NatsCluster>;
