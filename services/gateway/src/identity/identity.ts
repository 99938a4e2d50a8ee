/**
 * Device identity for the gateway: the peers map, loaded from a plain map file or from a WireGuard
 * dump plus a names file, and loaded again whenever one of those files changes (no restart). A
 * change that does not parse is logged and ignored: the last good map stays in force. A file that
 * does not parse at start stops the gateway.
 *
 * Only the source address of the connection counts. Nothing here reads headers: a forwarded-for
 * header can never name a device.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Logger } from '@shrooms/runtime';
import { parsePeersMapFile, type PeersSource } from './map-file.js';
import { PeersMap, type Identity } from './peers.js';
import { watchFile } from '@shrooms/runtime';
import { parseWgAllowedIps, peersFromWg, peersFromWgPeers } from './wg.js';

const run = promisify(execFile);

/** `wg show IFACE allowed-ips`: needs CAP_NET_ADMIN (kernel WireGuard) or root (wireguard-go). */
async function wgShowAllowedIps(iface: string): Promise<string> {
  try {
    return (await run('wg', ['show', iface, 'allowed-ips'], { timeout: 5_000 })).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(
      `cannot read the peers of WireGuard interface ${iface} (wg show ${iface} allowed-ips): ${e.code === 'ENOENT' ? 'wg not found; install wireguard-tools' : (e.stderr?.trim() ?? e.message)}`,
      { cause: err },
    );
  }
}

/** Calls `onChange` when the interface's peers change (polled; WireGuard has no change events). */
function pollWg(iface: string, everyMs: number, onChange: () => void, log: Logger): () => void {
  let last: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    wgShowAllowedIps(iface).then(
      (out) => {
        busy = false;
        if (last !== undefined && out !== last) onChange();
        last = out;
      },
      (err: Error) => {
        busy = false;
        log.error({ err: err.message }, 'WireGuard peers not read; keeping the last good map');
      },
    );
  }, everyMs);
  timer.unref();
  return function stopPolling() {
    clearInterval(timer);
  };
}

export interface IdentityOptions {
  /** This machine's name (SHROOMS_MACHINE): what requests from the machine itself are called. */
  machine: string;
  /** This machine's own mesh addresses (also the addresses the gateway may bind). */
  meshAddresses: string[];
  /** A plain peers map (YAML/JSON). */
  peersFile?: string;
  /** A file holding the output of `wg show <iface> dump`, with `wgNamesFile`. */
  wgDumpFile?: string;
  wgNamesFile?: string;
  /**
   * A WireGuard interface whose peers are read live (`wg show <iface> allowed-ips`, which never
   * prints the private key), with `wgNamesFile`; instead of `wgDumpFile`.
   */
  wgInterface?: string;
  /** How often the live peers are read, ms. Default 1000: a removed peer is refused within it. */
  wgPollMs?: number;
  /** Quiet time after a file change before reading it again, ms. Default 200. */
  debounceMs?: number;
  log: Logger;
}

export interface DeviceIdentity {
  /** The device of a connection's source address, or undefined: refuse the request (UNKNOWN_DEVICE). */
  identify(sourceAddress: string): Identity | undefined;
  /** The map in force. */
  current(): PeersMap;
  /** Reads the files again now (also done on every change). Resolves false when they did not parse. */
  reload(): Promise<boolean>;
  close(): void;
}

export async function loadIdentity(opts: IdentityOptions): Promise<DeviceIdentity> {
  const log = opts.log.child({ component: 'identity' });
  const files = sourceFiles(opts);

  async function build(): Promise<PeersMap> {
    const source = await readSource(opts, log);
    return new PeersMap(source.entries, { machine: opts.machine, mesh: source.mesh, addresses: [...opts.meshAddresses, ...source.self] });
  }

  let map = await build();
  log.info({ devices: map.size, files }, 'peers map loaded');

  async function reload(): Promise<boolean> {
    try {
      map = await build();
      log.info({ devices: map.size }, 'peers map reloaded');
      return true;
    } catch (err) {
      log.error({ err: (err as Error).message }, 'peers map not reloaded; keeping the last good map');
      return false;
    }
  }

  const stops = files.map((f) => watchFile(f, opts.debounceMs ?? 200, () => void reload()));
  if (opts.wgInterface) stops.push(pollWg(opts.wgInterface, opts.wgPollMs ?? 1000, () => void reload(), log));
  return {
    identify: (sourceAddress) => map.identify(sourceAddress),
    current: () => map,
    reload,
    close: () => stops.forEach((stop) => stop()),
  };
}

function sourceFiles(opts: IdentityOptions): string[] {
  if (opts.wgInterface) {
    if (opts.peersFile || opts.wgDumpFile) throw new Error('give a WireGuard interface or a peers/dump file, not both');
    if (!opts.wgNamesFile) throw new Error('a WireGuard interface needs a names file (SHROOMS_WG_NAMES_FILE)');
    return [opts.wgNamesFile];
  }
  if (opts.peersFile && (opts.wgDumpFile || opts.wgNamesFile))
    throw new Error('give either a peers map file or a WireGuard dump with a names file, not both');
  if (opts.peersFile) return [opts.peersFile];
  if (opts.wgDumpFile || opts.wgNamesFile) {
    if (!opts.wgDumpFile || !opts.wgNamesFile) throw new Error('a WireGuard dump needs a names file too (and the other way round)');
    return [opts.wgDumpFile, opts.wgNamesFile];
  }
  return [];
}

async function readSource(opts: IdentityOptions, log: Logger): Promise<PeersSource> {
  if (opts.wgInterface && opts.wgNamesFile) {
    const [shown, names] = await Promise.all([wgShowAllowedIps(opts.wgInterface), readFile(opts.wgNamesFile, 'utf8')]);
    const source = peersFromWgPeers(parseWgAllowedIps(shown, `wg show ${opts.wgInterface}`), names, opts.wgNamesFile);
    if (source.unnamed.length) log.warn({ publicKeys: source.unnamed }, 'WireGuard peers without a name are not devices of the mesh');
    return source;
  }
  if (opts.peersFile) return parsePeersMapFile(await readFile(opts.peersFile, 'utf8'), opts.peersFile);
  if (opts.wgDumpFile && opts.wgNamesFile) {
    const [dump, names] = await Promise.all([readFile(opts.wgDumpFile, 'utf8'), readFile(opts.wgNamesFile, 'utf8')]);
    const source = peersFromWg(dump, names, { dump: opts.wgDumpFile, names: opts.wgNamesFile });
    if (source.unnamed.length) log.warn({ publicKeys: source.unnamed }, 'WireGuard peers without a name are not devices of the mesh');
    return source;
  }
  // No map: only the machine itself (loopback and its own mesh addresses) is known.
  return { entries: [], mesh: 'local', self: [] };
}
