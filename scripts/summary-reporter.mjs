// A vitest reporter for the test command: writes to the file SHROOMS_SUMMARY_FILE names what the
// summary shows and vitest's JSON report does not say — the tests that passed only on a retry (the
// projects that allow one say why in vitest.config.ts), and each failed test's error message (for a
// timeout the JSON report keeps only a stack whose first line reads "Error: STACK_TRACE_ERROR").
import { writeFileSync } from 'node:fs';

/** The test as the JSON report names it: its file, then its suites' and its own names joined by spaces. */
function keyOf(testCase) {
  const names = [testCase.name];
  for (let p = testCase.parent; p?.type === 'suite'; p = p.parent) names.unshift(p.name);
  return `${testCase.module.moduleId}\n${names.join(' ')}`;
}

export default class SummaryReporter {
  retried = [];
  failed = {};

  onTestCaseResult(testCase) {
    const result = testCase.result();
    const retries = testCase.diagnostic()?.retryCount ?? 0;
    if (retries > 0 && result.state === 'passed') this.retried.push({ name: testCase.fullName, retries });
    const error = result.state === 'failed' ? result.errors?.[0] : undefined;
    if (error) this.failed[keyOf(testCase)] = `${error.name ?? 'Error'}: ${error.message ?? ''}`;
  }

  onTestRunEnd() {
    const file = process.env.SHROOMS_SUMMARY_FILE;
    if (file) writeFileSync(file, `${JSON.stringify({ retried: this.retried, failed: this.failed }, null, 2)}\n`);
  }
}
