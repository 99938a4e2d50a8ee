// Runs inside one network namespace and makes raw HTTP/1.1 requests for the test from there (any
// Host, Origin or content type, as a browser or an attacker would send them), so the server sees
// them coming from that namespace's address. One JSON object per line on stdin ({id, url, method,
// headers, body}); one answer per line on stdout ({id, status, headers, text} or {id, error}).
// Plain JavaScript, no dependencies: it starts fast.
import { request } from 'node:http';
import { createInterface } from 'node:readline';

const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  const u = new URL(req.url);
  const r = request(
    {
      host: u.hostname,
      port: u.port,
      path: `${u.pathname}${u.search}`,
      method: req.method ?? 'GET',
      headers: req.headers ?? {},
      timeout: 30_000,
    },
    (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => out({ id: req.id, status: res.statusCode, headers: res.headers, text }));
    },
  );
  r.on('error', (err) => out({ id: req.id, error: `${err.name}: ${err.code ?? err.message}` }));
  r.on('timeout', () => r.destroy(new Error('timeout')));
  r.end(req.body);
});
out({ ready: true });
