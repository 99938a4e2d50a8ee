/**
 * A bare HTTP/1.1 client over a TCP socket, for requests no well-behaved client would send: raw
 * bytes in the path, bogus or huge headers, lying Content-Length, garbage request lines. It reads
 * one response (Content-Length, chunked, or until close) and never hangs past `timeoutMs`.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  /** HTTP status, or undefined when the server closed without answering. */
  status?: number;
  headers: Record<string, string>;
  body: Buffer;
  /** True when no complete response arrived within the time bound. */
  timedOut: boolean;
  /** A socket error (e.g. ECONNRESET) or 'closed' when the server hung up without a response. */
  error?: string;
  /** True when the response is an event stream (the client hung up after its headers). */
  stream: boolean;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as given (no normalization, no encoding). */
  path: string;
  headers?: [string, string][];
  body?: Buffer | string;
  /** Add `content-length` for the body (default true). */
  contentLength?: boolean;
}

export function buildRawRequest(r: RawRequest): Buffer {
  const body = r.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  const lines = [`${r.method} ${r.path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
  for (const [k, v] of r.headers ?? []) lines.push(`${k}: ${v}`);
  if (r.contentLength !== false && (body.length > 0 || r.method === 'POST')) lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), body]);
}

export interface RawExchangeOptions {
  timeoutMs?: number;
  host?: string;
  /** Half-close after sending, so an incomplete request ends instead of waiting for more bytes. */
  halfClose?: boolean;
  /**
   * Write `bytes` at a time, `gapMs` apart, like a client on a slower link than loopback: a server
   * that answers before the rest is in and closes at once then resets the connection under the
   * answer (one write, as by default, is all in before the server reads it).
   */
  pace?: { bytes: number; gapMs: number };
}

/**
 * Sends `data` to `host`:`port` and reads one response (interim 1xx answers skipped). The socket is
 * reset, not closed, afterwards, so thousands of exchanges leave no TIME_WAIT behind.
 */
export function rawExchange(port: number, data: Buffer, opts: RawExchangeOptions = {}): Promise<RawResponse> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    const sock = connect({ port, host: opts.host ?? '127.0.0.1' });
    let buf = Buffer.alloc(0);
    let done = false;
    let head: { status: number; headers: Record<string, string>; bodyStart: number } | undefined;
    const finish = (r: Partial<RawResponse>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        if (!sock.destroyed) sock.resetAndDestroy();
      } catch {
        sock.destroy();
      }
      resolve({
        headers: head?.headers ?? {},
        body: Buffer.alloc(0),
        timedOut: false,
        stream: false,
        ...(head ? { status: head.status } : {}),
        ...r,
      });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
    const tryParse = (closed: boolean) => {
      if (!head) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (closed) finish({ error: buf.length ? 'malformed response' : 'closed' });
          return;
        }
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const m = lines[0]!.match(/^HTTP\/1\.[01] (\d{3})/);
        if (!m) return finish({ error: `bad status line ${JSON.stringify(lines[0]!.slice(0, 80))}` });
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const i = l.indexOf(':');
          if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const status = Number(m[1]);
        if (status >= 100 && status < 200 && status !== 101) {
          buf = buf.subarray(end + 4);
          return tryParse(closed);
        }
        head = { status, headers, bodyStart: end + 4 };
        if ((headers['content-type'] ?? '').startsWith('text/event-stream')) return finish({ stream: true });
      }
      const raw = buf.subarray(head.bodyStart);
      const cl = head.headers['content-length'];
      if (cl !== undefined) {
        if (raw.length >= Number(cl)) finish({ body: raw.subarray(0, Number(cl)) });
        else if (closed) finish({ body: raw, error: 'truncated body' });
        return;
      }
      if (/chunked/i.test(head.headers['transfer-encoding'] ?? '')) {
        const body = dechunk(raw);
        if (body) finish({ body });
        else if (closed) finish({ body: raw, error: 'truncated chunked body' });
        return;
      }
      if (closed) finish({ body: raw });
    };
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      tryParse(false);
    });
    sock.on('end', () => tryParse(true));
    sock.on('close', () => tryParse(true));
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (head) tryParse(true);
      finish({ error: e.code ?? e.message });
    });
    void send(sock, data, opts, () => done);
  });
}

async function send(sock: Socket, data: Buffer, opts: RawExchangeOptions, done: () => boolean): Promise<void> {
  const step = Math.max(1, opts.pace?.bytes ?? data.length);
  let at = 0;
  do {
    if (at > 0) await new Promise((r) => setTimeout(r, opts.pace!.gapMs));
    // The answer came, or the server closed, while the rest waited: nothing more to send.
    if (done() || sock.destroyed) return;
    const chunk = data.subarray(at, at + step);
    at += step;
    if (at >= data.length && opts.halfClose) sock.end(chunk);
    else sock.write(chunk);
  } while (at < data.length);
}

/** The body of a complete chunked message, or undefined while chunks are still missing. */
function dechunk(raw: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', i);
    if (eol < 0) return undefined;
    const size = parseInt(raw.subarray(i, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (raw.length < eol + 2 + size + 2) return undefined;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}
