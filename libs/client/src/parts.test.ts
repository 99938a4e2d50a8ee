import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ShroomsError } from '@shrooms/protocol';
import { tempDir, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { returnedParts } from './parts.js';

// <temp>/session is the session's folder; <temp>/outside/secret.txt is any file beside it. Real
// paths throughout (the OS temp dir may be a link itself), so messages can be pinned exactly.
let temp: TempDir;
let root: string;
let session: string;
let secret: string;
beforeAll(async () => {
  temp = await tempDir('client-parts');
  root = await realpath(temp.path);
  session = join(root, 'session');
  secret = join(root, 'outside', 'secret.txt');
  await mkdir(join(session, 'sub'), { recursive: true });
  await mkdir(join(root, 'outside'));
  await writeFile(join(session, 'report.md'), 'the report');
  await writeFile(join(session, 'sub', 'notes.txt'), 'notes');
  await writeFile(secret, 'a secret');
  await symlink(secret, join(session, 'leak.txt'));
  await symlink(join(session, 'report.md'), join(session, 'alias.md'));
  await symlink(session, join(root, 'session-link'));
});
afterAll(async () => {
  await temp?.remove();
});

const confined = () => ({ cwd: session, confine: true });
const text = (raw: string | undefined) => Buffer.from(raw ?? '', 'base64').toString();

/** The error `returnedParts` rejects with (it must reject). */
async function refusal(files: string[], opts = confined()): Promise<ShroomsError> {
  const err = await returnedParts(files, undefined, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ShroomsError);
  return err as ShroomsError;
}

describe('returnedParts confined to a session folder', () => {
  it('reads a relative path from the session folder, not from the working directory of the process', async () => {
    const parts = await returnedParts(['report.md', 'sub/notes.txt'], undefined, confined());
    expect(parts?.map((p) => [p.filename, text(p.raw)])).toEqual([
      ['report.md', 'the report'],
      ['notes.txt', 'notes'],
    ]);
  });

  it('reads a file inside named by its absolute path, and through a link that stays inside', async () => {
    const parts = await returnedParts([join(session, 'report.md'), 'alias.md'], undefined, confined());
    expect(parts?.map((p) => text(p.raw))).toEqual(['the report', 'the report']);
  });

  it('reads the files of a session folder that is itself reached through a link', async () => {
    const parts = await returnedParts(['report.md'], undefined, { cwd: join(root, 'session-link'), confine: true });
    expect(text(parts?.[0]?.raw)).toBe('the report');
  });

  it('refuses ../ out of the folder with INVALID_PARAMS naming the path and the folder', async () => {
    const err = await refusal(['../outside/secret.txt']);
    expect(err.key).toBe('INVALID_PARAMS');
    expect(err.message).toBe(
      `../outside/secret.txt is outside the session's folder ${session} (it leads to ${secret}); only files inside it can be returned`,
    );
    expect(err.details).toEqual({ path: '../outside/secret.txt', folder: session });
  });

  it('refuses an absolute path outside the folder', async () => {
    const err = await refusal([secret]);
    expect(err.key).toBe('INVALID_PARAMS');
    expect(err.message).toBe(`${secret} is outside the session's folder ${session}; only files inside it can be returned`);
  });

  it('refuses a link inside the folder that leads outside it, by relative and by absolute path', async () => {
    for (const f of ['leak.txt', join(session, 'leak.txt')]) {
      const err = await refusal([f]);
      expect(err.key).toBe('INVALID_PARAMS');
      expect(err.message).toBe(
        `${f} is outside the session's folder ${session} (it leads to ${secret}); only files inside it can be returned`,
      );
    }
  });

  it('refuses the whole call when one of its files is outside', async () => {
    const err = await refusal(['report.md', secret]);
    expect(err.details.path).toBe(secret);
  });

  it('names the missing file in the session folder', async () => {
    const err = await refusal(['missing.md']);
    expect(err.key).toBe('INVALID_PARAMS');
    expect(err.message).toMatch(/^cannot read missing\.md: ENOENT/);
    expect(err.message).toContain(join(session, 'missing.md'));
  });
});

describe('returnedParts unconfined (the CLI in a shell)', () => {
  it('reads a relative path from the folder it is given, and any path the caller can read', async () => {
    const parts = await returnedParts(['report.md', secret], { n: 1 }, { cwd: session });
    expect(parts?.map((p) => p.filename ?? p.data)).toEqual(['report.md', 'secret.txt', { n: 1 }]);
    expect(text(parts?.[1]?.raw)).toBe('a secret');
  });
});
