#!/usr/bin/env node
// `pnpm bench` for @hermes/cli: wall time of `hermes --version`, `hermes --help` and
// `hermes gateway status` (a gateway running) against a bare `node -e 0`, measured in the same
// run in interleaved rounds so machine load drifts over all of them alike.
// Targets (issue 18): --version ≤ 1.5× bare Node start; gateway status ≤ 2×.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');
const rounds = Number(process.env.BENCH_ROUNDS ?? 40);
const home = mkdtempSync(path.join(tmpdir(), 'hermes-bench-'));
const env = { ...process.env, HERMES_HOME: home, NO_COLOR: '1' };

function time(args) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ ms, code });
    });
  });
}

const cases = [
  { name: 'node -e 0 (baseline)', args: ['-e', '0'] },
  { name: 'hermes --version', args: [bin, '--version'], target: 1.5 },
  { name: 'hermes --help', args: [bin, '--help'] },
  { name: 'hermes gateway status', args: [bin, 'gateway', 'status'], target: 2, expectCode: 0 },
];

const start = spawnSync(process.execPath, [bin, 'gateway', 'start', '--port', '0'], {
  env,
  encoding: 'utf8',
});
if (start.status !== 0) {
  console.error(`could not start a gateway for the bench:\n${start.stdout}${start.stderr}`);
  process.exit(1);
}
try {
  const samples = new Map(cases.map((item) => [item.name, []]));
  for (const item of cases) await time(item.args); // warm the file cache
  for (let round = 0; round < rounds; round += 1) {
    for (const item of cases) {
      const { ms, code } = await time(item.args);
      if (item.expectCode !== undefined && code !== item.expectCode) {
        throw new Error(`${item.name} exited ${code}`);
      }
      samples.get(item.name).push(ms);
    }
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];
  const baseline = median(samples.get(cases[0].name));
  console.log(`${rounds} interleaved rounds, Node ${process.version}, ${process.platform}`);
  console.log('case                      p50 ms   p90 ms   ratio (p50 / baseline)');
  for (const item of cases) {
    const values = samples.get(item.name);
    const ratio = median(values) / baseline;
    const verdict =
      item.target === undefined
        ? ''
        : ratio <= item.target
          ? `  ✓ target ≤ ${item.target}×`
          : `  ✗ target ≤ ${item.target}×`;
    console.log(
      `${item.name.padEnd(24)} ${median(values).toFixed(1).padStart(7)}  ${p90(values).toFixed(1).padStart(7)}   ${ratio.toFixed(2)}×${verdict}`,
    );
  }
} finally {
  spawnSync(process.execPath, [bin, 'gateway', 'stop'], { env });
  rmSync(home, { recursive: true, force: true });
}
