// Runs inside one network namespace and makes HTTP requests for the test from there, so the
// gateway sees them coming from that machine's addresses. One JSON object per line on stdin
// ({id, url, method, headers, body, timeoutMs}); one answer per line on stdout ({id, status,
// headers, text} or {id, error}). Plain JavaScript, no dependencies: it starts fast.
import { createInterface } from 'node:readline';

const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
createInterface({ input: process.stdin }).on('line', async (line) => {
  const req = JSON.parse(line);
  try {
    const res = await fetch(req.url, {
      method: req.method ?? 'GET',
      headers: req.headers ?? {},
      body: req.body,
      signal: AbortSignal.timeout(req.timeoutMs ?? 30_000),
    });
    out({ id: req.id, status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() });
  } catch (err) {
    out({ id: req.id, error: `${err.name}: ${err.cause?.code ?? err.message}` });
  }
});
out({ ready: true });
