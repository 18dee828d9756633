/**
 * Prints one plain closing line, "Tests: N passed, N failed, N skipped", after vitest's own
 * report, so CI logs and tools that read closing lines see the counts without parsing colours.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed') count.failed++;
        else count.skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0)
        count.failed++;
    }
    process.stdout.write(
      `\nTests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`,
    );
  }
}
