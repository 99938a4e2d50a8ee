/**
 * Which Claude Code conversation a session continues: the id is kept in `stateDir/claude-session.json`
 * with the cwd it ran in; `--resume` only when that cwd is the same (resume is scoped to it) and the
 * transcript exists, else a new `--session-id`.
 */
import { randomUUID } from 'node:crypto';
import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sessionFile } from './session-file.js';
import type { Logger } from '@shrooms/runtime';

interface StoredSession {
  sessionId: string;
  cwd: string;
}

export async function claudeSession(
  stateDir: string,
  cwd: string,
  configDir: string,
  log: Logger,
): Promise<{ sessionId: string; resume: boolean }> {
  const file = sessionFile<StoredSession>(stateDir, 'claude');
  const stored = await file.read();
  const resume = stored !== undefined && stored.cwd === cwd && (await transcriptExists(configDir, stored.sessionId));
  if (stored && stored.cwd !== cwd)
    log.warn({ was: stored.cwd, now: cwd }, 'the session directory changed; claude starts a new conversation');
  const sessionId = resume ? stored.sessionId : randomUUID();
  await file.write({ sessionId, cwd });
  return { sessionId, resume };
}

/** Whether a transcript `<id>.jsonl` exists in any project folder of Claude Code's config dir. */
async function transcriptExists(configDir: string, sessionId: string): Promise<boolean> {
  const projects = join(configDir, 'projects');
  const dirs = await readdir(projects).catch(() => [] as string[]);
  for (const d of dirs) {
    if (
      await access(join(projects, d, `${sessionId}.jsonl`)).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}
