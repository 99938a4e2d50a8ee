/**
 * Version policy (spec §4): `A2A-Version: 1.0` (header or `?A2A-Version=`) is served; a request with
 * none is served too (v1.0 method names are unambiguous, and people's curl recipes send none); any
 * other explicit version gets VersionNotSupported.
 */
import type { FastifyRequest } from 'fastify';
import { ShroomsError } from '@shrooms/protocol';

export function checkVersion(req: FastifyRequest): void {
  const header = req.headers['a2a-version'];
  const query = (req.query as Record<string, unknown> | undefined)?.['A2A-Version'];
  const raw = (Array.isArray(header) ? header[0] : header) ?? (typeof query === 'string' ? query : undefined);
  const v = (raw ?? '').trim();
  if (v === '' || v === '1.0' || v === '1') return;
  throw new ShroomsError(
    'VERSION_NOT_SUPPORTED',
    `A2A-Version ${JSON.stringify(v.slice(0, 20))} is not supported; this server speaks 1.0`,
    { supported: '1.0' },
  );
}
