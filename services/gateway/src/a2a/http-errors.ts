/**
 * Errors raised before a request reaches our routes — a body too large, a URL that does not decode,
 * a path segment past the router's length, bytes the HTTP parser refuses — answered like every
 * other error: from the one table (libs/protocol errors.ts), in the binding's own shape (JSON-RPC
 * on `POST /a2a[/{session}]`; v0.3 HTTP+JSON under `/a2a/{session}/v1/` as its routes answer, the
 * JSON-RPC error object with the HTTP status; `google.rpc.Status` elsewhere). Fastify's defaults answer these with
 * bodies of their own, which no A2A client can read.
 */
import type { Socket } from 'node:net';
import { maxHeaderSize } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ShroomsError, toJsonRpcError, toRestError } from '@shrooms/protocol';
import { answerBeforeTheRest, isNatsOutage, linger, natsUnavailable } from '@shrooms/runtime';

const isRpcPath = (method: string, url: string) => method === 'POST' && /^\/a2a(\/[^/]+)?\/?$/.test(url.split('?')[0]!);
const isV03RestPath = (url: string) => /^\/a2a\/[^/]+\/v1\//.test(url);

/** Answers `se` in the shape of the binding the request was made on. */
export function answerError(req: FastifyRequest, reply: FastifyReply, se: ShroomsError): FastifyReply {
  if (isRpcPath(req.method, req.url)) return reply.code(200).send({ jsonrpc: '2.0', id: null, error: toJsonRpcError(se) });
  if (isV03RestPath(req.url)) return reply.code(se.spec.http).send(toJsonRpcError(se));
  return reply.code(se.spec.http).send(toRestError(se));
}

/** `setErrorHandler`: body limit, content-type and other framework 4xx errors, and anything unexpected. */
export function errorHandler(bodyLimit: number) {
  return function handleError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
    // A refusal of ours thrown by a route that answers no errors itself (/agents, the machine card).
    if ((err as unknown) instanceof ShroomsError) return answerError(req, reply, err as unknown as ShroomsError);
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return answerError(
        req,
        reply,
        new ShroomsError('LIMIT_EXCEEDED', `request body is larger than ${bodyLimit} bytes`, { limit: 'bodyBytes', max: bodyLimit }),
      );
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
      return answerError(req, reply, new ShroomsError('INVALID_REQUEST', err.message));
    if (isNatsOutage(err)) {
      const se = natsUnavailable();
      return answerError(req, reply.header('retry-after', String(se.retryAfterSeconds)), se);
    }
    req.log.error({ err }, 'unhandled error');
    return answerError(req, reply, new ShroomsError('INTERNAL', 'internal error'));
  };
}

/**
 * `onSend` for every answer. One sent before its request is all in — a body past the limit (fastify
 * would then close the connection at once), a door's refusal before the body is read — would be
 * lost to a reset if the connection closed with the rest still coming, so it keeps the connection
 * open while the rest is read and dropped (`answerBeforeTheRest`, libs/runtime). Node's parser drops
 * a refused body without handing it to the request stream; the socket's bytes are what is counted.
 */
export function lingerOnEarlyAnswer(
  req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, p: unknown) => void,
): void {
  if (!req.raw.complete) {
    reply.removeHeader('connection');
    answerBeforeTheRest(req.raw, reply.raw);
  }
  done(null, payload);
}

/** Fastify's `frameworkErrors`: a URL that does not decode, a path segment past `maxParamLength`. */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path segment is longer than the router accepts (100 characters)'
      : 'the URL is not valid (bad percent-encoding)';
  return answerError(req, reply, new ShroomsError('INVALID_REQUEST', message));
}

/** Connections whose refused request was answered: the parser's errors on their later bytes are not. */
const answered = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`: the HTTP parser refused the request (no route, no binding known).
 * Answers `google.rpc.Status` and closes — after the answer, once the client has stopped sending
 * (`linger`, libs/runtime), so that the rest of a request it is still writing does not reset the
 * connection under the answer; header overflow is 431 naming the limit.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  let status = 400;
  let se = new ShroomsError('INVALID_REQUEST', 'the request is not valid HTTP/1.1');
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    se = new ShroomsError('LIMIT_EXCEEDED', `request headers are larger than ${maxHeaderSize} bytes`, {
      limit: 'headerBytes',
      max: maxHeaderSize,
    });
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    se = new ShroomsError('INVALID_REQUEST', 'the request did not arrive in time');
  }
  const body = JSON.stringify({ error: { ...toRestError(se).error, code: status } });
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.end();
  linger(socket, () => false);
}
