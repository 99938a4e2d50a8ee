// A vitest reporter for the test command: writes to the file SHROOMS_SUMMARY_FILE names what the
// summary shows and vitest's JSON report does not say — the tests that passed only on a retry (the
// projects that allow one say why in vitest.config.ts) with the first line of what failed before, and
// each failed test's error message (for a timeout the JSON report keeps only a stack whose first line
// reads "Error: STACK_TRACE_ERROR").
import { writeFileSync } from 'node:fs';

/** The test as the JSON report names it: its file, then its suites' and its own names joined by spaces. */
function keyOf(testCase) {
  const names = [testCase.name];
  for (let p = testCase.parent; p?.type === 'suite'; p = p.parent) names.unshift(p.name);
  return `${testCase.module.moduleId}\n${names.join(' ')}`;
}

/** `Name: message`, its first line, at most 300 characters: what a summary line can carry. */
function firstLine(error) {
  const text = `${error.name ?? 'Error'}: ${error.message ?? ''}`.split('\n')[0];
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

export default class SummaryReporter {
  retried = [];
  failed = {};

  onTestCaseResult(testCase) {
    const result = testCase.result();
    const retries = testCase.diagnostic()?.retryCount ?? 0;
    // A retried test that passed still reports its earlier attempts' errors: the first says why it flaked.
    const first = result.errors?.[0];
    if (retries > 0 && result.state === 'passed')
      this.retried.push({ name: testCase.fullName, retries, ...(first ? { error: firstLine(first) } : {}) });
    const error = result.state === 'failed' ? result.errors?.[0] : undefined;
    if (error) this.failed[keyOf(testCase)] = `${error.name ?? 'Error'}: ${error.message ?? ''}`;
  }

  onTestRunEnd() {
    const file = process.env.SHROOMS_SUMMARY_FILE;
    if (file) writeFileSync(file, `${JSON.stringify({ retried: this.retried, failed: this.failed }, null, 2)}\n`);
  }
}
