// A vitest reporter for the test command: writes the tests that passed only on a retry (the
// projects that allow one say why in vitest.config.ts) to the file SHROOMS_RETRIED_FILE names, so
// the summary can show them — vitest's JSON report does not say.
import { writeFileSync } from 'node:fs';

export default class RetriedReporter {
  retried = [];

  onTestCaseResult(testCase) {
    const retries = testCase.diagnostic()?.retryCount ?? 0;
    if (retries > 0 && testCase.result().state === 'passed') this.retried.push({ name: testCase.fullName, retries });
  }

  onTestRunEnd() {
    const file = process.env.SHROOMS_RETRIED_FILE;
    if (file) writeFileSync(file, `${JSON.stringify(this.retried, null, 2)}\n`);
  }
}
