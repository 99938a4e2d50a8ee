/**
 * A file part and a data part go from a caller (the a2a-js 1.3 client) into the demo session —
 * the file under its working directory, named in the delivered text — and come back as the
 * answer's artifact when the worker finishes with `a2a update … --file … --data …`, as a worker
 * that prefers a shell does.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { Role, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { CLI, eventually, runTs } from '@shrooms/testing';

it('carries a file and data into the session and returns them as the artifact', async () => {
  const client = await new ClientFactory().createFromUrl(inject('endpoint'));
  const id = `parts-${randomUUID()}`;
  const sent = (await client.sendMessage({
    message: {
      messageId: id,
      role: Role.ROLE_USER,
      parts: [
        // `quiet:` keeps the echo's task open, so the test can finish it as the worker.
        { content: { $case: 'text', value: 'quiet: review this diff' } },
        { content: { $case: 'raw', value: Buffer.from('--- a\n+++ b\n') }, filename: 'change.diff', mediaType: 'text/x-diff' },
        { content: { $case: 'data', value: { branch: 'main', files: 2 } } },
      ],
    },
    configuration: { returnImmediately: true },
  } as any)) as Task;
  const taskId = sent.id;
  const inbox = join(inject('stateDir'), '.shrooms', 'inbox', taskId.replace(/:/g, '_'));
  await eventually(async () => (await readFile(join(inbox, 'change.diff'), 'utf8')) === '--- a\n+++ b\n');

  const cli = runTs(
    CLI,
    ['a2a', 'update', taskId, 'done', 'reviewed', '--file', join(inbox, 'change.diff'), '--data', '{"verdict":"ok"}'],
    {
      SHROOMS_GATEWAY_URL: inject('gatewayUrl'),
      SHROOMS_MACHINE: inject('machine'),
      SHROOMS_AGENT_SESSION: 'demo',
    },
  );
  const code = cli.child.exitCode ?? (await new Promise<number | null>((r) => cli.child.once('exit', r)));
  expect(code, cli.output()).toBe(0);

  const done = await client.getTask({ id: taskId } as any);
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const parts = done.artifacts[0]!.parts;
  expect(parts[0]!.content).toEqual({ $case: 'text', value: 'reviewed' });
  expect(parts[1]!.filename).toBe('change.diff');
  expect(parts[1]!.content?.$case === 'raw' && Buffer.from(parts[1]!.content.value).toString()).toBe('--- a\n+++ b\n');
  expect(parts[2]!.content).toEqual({ $case: 'data', value: { verdict: 'ok' } });
});
