/**
 * What the deploy checks found, one line each: `ok`, `FAIL` (the deploy is broken) or `WAIT`
 * (something another part of the project still has to land, e.g. a CLI command or a health server;
 * counted as a failure only with --strict).
 */
export function createReport({ strict = false, quiet = false } = {}) {
  const lines = [];
  const counts = { ok: 0, fail: 0, wait: 0 };
  const print = (tag, what, detail) => {
    const line = `${tag.padEnd(4)} ${what}${detail ? `: ${detail}` : ''}`;
    lines.push(line);
    if (!quiet) process.stdout.write(`${line}\n`);
  };
  return {
    ok(what, detail) {
      counts.ok++;
      print('ok', what, detail);
    },
    fail(what, detail) {
      counts.fail++;
      print('FAIL', what, detail);
    },
    wait(what, detail) {
      if (strict) return this.fail(what, detail);
      counts.wait++;
      print('WAIT', what, detail);
    },
    note(text) {
      if (!quiet) process.stdout.write(`     ${text}\n`);
    },
    /** Runs `fn`; an exception is a failure of `what` (a bug in the check shows, never passes). */
    async guard(what, fn) {
      try {
        await fn();
      } catch (err) {
        this.fail(what, err instanceof Error ? err.message : String(err));
      }
    },
    counts,
    lines,
    summary() {
      return `deploy check: ${counts.ok} ok, ${counts.fail} failed, ${counts.wait} waiting${counts.wait ? ' (not counted; --strict counts them)' : ''}`;
    },
  };
}
