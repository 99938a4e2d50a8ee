/**
 * Version policy (spec §4, amendments): `A2A-Version` (header or `?A2A-Version=`) Major.Minor
 * decides — a patch (`1.0.1`) never does. 1.0 and 0.3 are served on the same endpoints; a request
 * with none is served too (the method names tell v1.0 `SendMessage` from v0.3 `message/send`, and
 * people's curl recipes send no header); any other explicit version gets VersionNotSupported.
 */
import type { FastifyRequest } from 'fastify';
import { ShroomsError } from '@shrooms/protocol';

export type A2AVersion = '1.0' | '0.3';

/** The version the request asked for, or undefined when it named none. */
export function checkVersion(req: FastifyRequest): A2AVersion | undefined {
  const header = req.headers['a2a-version'];
  const query = (req.query as Record<string, unknown> | undefined)?.['A2A-Version'];
  const raw = (Array.isArray(header) ? header[0] : header) ?? (typeof query === 'string' ? query : undefined);
  const v = (raw ?? '').trim();
  if (v === '') return undefined;
  const m = /^(\d{1,3})(?:\.(\d{1,3})(?:\.\d{1,6})?)?$/.exec(v);
  if (m) {
    const mm = `${m[1]}.${m[2] ?? '0'}`;
    if (mm === '1.0' || mm === '0.3') return mm;
  }
  throw new ShroomsError(
    'VERSION_NOT_SUPPORTED',
    `A2A-Version ${JSON.stringify(v.slice(0, 20))} is not supported; this server speaks 1.0 and 0.3`,
    { supported: '1.0,0.3' },
  );
}
