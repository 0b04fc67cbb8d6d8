#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkPackages, describePassing } from './check.js';
import { killRunningExamples } from './examples.js';

const USAGE = `Usage: pnpm check:packages [--package <name>]… [--no-cache]

Packs every public workspace package, installs the tarballs into a scratch project outside the
workspace with npm, and checks each one as a stranger would: publint, attw (esm-only), a strict
NodeNext type-check without skipLibCheck, import()/require() of every entry point, and the README
examples (each must exit 0 and print what the README shows). Conventions: docs/releasing.md.

  --package <name>  report only this package (repeatable; everything is still packed)
  --no-cache        recompute everything: no cached results, a fresh scratch install
  HERMES_PACK_CHECK_CACHE=<dir>  where tarballs, the scratch project and results live
                                 (default: $XDG_CACHE_HOME or ~/.cache, /hermes-ts/pack-check)`;

function findRoot(from: string): string {
  let current = path.resolve(from);
  for (;;) {
    if (existsSync(path.join(current, 'pnpm-workspace.yaml'))) return current;
    const parent = path.dirname(current);
    if (parent === current) throw new Error('not inside a pnpm workspace (no pnpm-workspace.yaml)');
    current = parent;
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      package: { type: 'string', multiple: true },
      'no-cache': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const root = findRoot(process.cwd());
  const log = (line: string) => console.log(`pack-check: ${line}`);
  const result = await checkPackages({
    root,
    useCache: !values['no-cache'],
    only: values.package ?? [],
    log,
  });
  console.log('');
  let failing = 0;
  for (const report of result.packages) {
    if (report.problems.length === 0) {
      console.log(`✓ ${report.name}@${report.version} — ${describePassing(report)}`);
    } else {
      failing += 1;
      console.log(`✗ ${report.name}@${report.version}`);
      for (const problem of report.problems) console.log(`    - ${problem}`);
    }
    for (const note of report.notes) console.log(`    note: ${note}`);
  }
  for (const problem of result.general) console.log(`✗ ${problem}`);
  console.log('');
  const total = result.packages.length;
  const time = `${result.seconds.toFixed(1)} s`;
  if (failing === 0 && result.general.length === 0) {
    console.log(`pack-check: all ${total} public packages work from their tarballs (${time})`);
    return 0;
  }
  console.log(
    `pack-check: ${failing} of ${total} public packages fail from their tarballs${result.general.length > 0 ? ', plus the problems above no package owns' : ''} (${time}). Conventions and fixes: docs/releasing.md; run it alone: pnpm check:packages`,
  );
  return 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killRunningExamples();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`pack-check: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
