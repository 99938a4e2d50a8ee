/** clientGone on real sockets: a blocking wait hears its client leave, even one gone before it listened. */
import { Socket } from 'node:net';
import { once } from 'node:events';
import type { FastifyRequest } from 'fastify';
import { expect, it } from 'vitest';
import { clientGone } from './caller.js';

const requestOn = (socket: Socket) => ({ raw: { socket } }) as unknown as Pick<FastifyRequest, 'raw'>;

it('tells of a client that leaves while followed, once, and not after it stopped following', async () => {
  const followed = new Socket();
  let heard = 0;
  clientGone(requestOn(followed))(() => heard++);
  followed.destroy();
  await once(followed, 'close');
  expect(heard).toBe(1);

  const dropped = new Socket();
  let late = 0;
  const stop = clientGone(requestOn(dropped))(() => late++);
  stop();
  dropped.destroy();
  await once(dropped, 'close');
  expect(late).toBe(0);
  expect(dropped.listenerCount('close')).toBe(0);
});

it('tells at once of a client already gone when the wait begins', async () => {
  const gone = new Socket();
  gone.destroy();
  await once(gone, 'close');
  let heard = 0;
  clientGone(requestOn(gone))(() => heard++);
  expect(heard).toBe(1);
});
