/**
 * Closing a connection without resetting it under the client's answer. A connection closed with the
 * client's bytes still unread is reset, and a reset discards an answer the client has not read yet:
 * a client that writes its whole request before it reads (most do) sees EPIPE and no answer. Where
 * a server of ours (the gateway, the bridge's MCP endpoint) answers before a request is all in — a
 * body past a limit, a refusal before the body is read, headers the HTTP parser refuses — it goes on
 * reading and dropping what the client still sends, for at most LINGER_BYTES more or LINGER_MS, and
 * closes the connection only then.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/** What is still read and dropped after an early answer: at most this many bytes more… */
const LINGER_BYTES = 16 * 1024 * 1024;
/** …or for this long; past either the connection is closed. The bytes are counted every LINGER_CHECK_MS. */
const LINGER_MS = 5_000;
const LINGER_CHECK_MS = 50;

/**
 * Watches `socket` while what the client still sends is read and dropped: once `done()` is true,
 * `then()` runs; past LINGER_BYTES or LINGER_MS the connection is closed. Ends by itself when the
 * connection does.
 */
export function linger(socket: Socket, done: () => boolean, then: () => void = () => {}): void {
  const start = socket.bytesRead;
  const deadline = Date.now() + LINGER_MS;
  const watch = setInterval(() => {
    if (socket.destroyed) return clearInterval(watch);
    if (done()) {
      clearInterval(watch);
      return then();
    }
    if (socket.bytesRead - start > LINGER_BYTES || Date.now() >= deadline) {
      clearInterval(watch);
      socket.destroy();
    }
  }, LINGER_CHECK_MS);
  watch.unref();
}

/**
 * After an answer given before the request is all in (a body past a limit, a refusal before the body
 * is read): reads and drops the rest (`linger`) instead of letting the connection close under the
 * answer. A client that asked to close
 * (`Connection: close`, as Python's urllib always does) would meet the same reset — Node closes such
 * a connection as soon as the answer is written — so the answer keeps the connection alive, and it is
 * closed as asked once the rest is in. Call before the answer's headers are written.
 */
export function answerBeforeTheRest(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  // Only a connection: a request injected in-process (fastify's inject) has a stand-in socket.
  if (req.complete || !(socket instanceof Socket) || socket.destroyed) return;
  const closeAfter = !res.shouldKeepAlive;
  res.shouldKeepAlive = true;
  req.resume();
  linger(
    socket,
    () => req.complete,
    () => closeAfter && socket.end(),
  );
}
