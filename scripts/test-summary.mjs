#!/usr/bin/env node
// Sums every workspace package's vitest JSON report into one closing line:
//   tests: <N> passed, <N> failed, <N> skipped
// `--clean` removes old reports first, so a package that did not run cannot count.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const reports = [];
for (const group of ['packages', 'apps', 'tooling']) {
  const dir = path.join(root, group);
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir)) {
    reports.push({ name: `${group}/${name}`, dir: path.join(dir, name, 'test-results') });
  }
}

if (process.argv.includes('--clean')) {
  for (const report of reports) rmSync(report.dir, { recursive: true, force: true });
  process.exit(0);
}

let passed = 0;
let failed = 0;
let skipped = 0;
for (const report of reports) {
  // vitest.json: the package's tests; vitest-timing.json: its timing stage (vitest.shared.ts).
  for (const name of ['vitest.json', 'vitest-timing.json']) {
    const file = path.join(report.dir, name);
    if (!existsSync(file)) continue;
    count(JSON.parse(readFileSync(file, 'utf8')));
  }
}

function count(result) {
  passed += result.numPassedTests ?? 0;
  failed += result.numFailedTests ?? 0;
  skipped += (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
  // A suite that failed to load has no failed tests but must still count as a failure.
  const brokenSuites = (result.testResults ?? []).filter(
    (suite) => suite.status === 'failed' && (suite.assertionResults ?? []).length === 0,
  ).length;
  failed += brokenSuites;
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
