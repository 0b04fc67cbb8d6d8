import path from 'node:path';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { problemKindInfo } from '@arethetypeswrong/core/problems';
import type { Problem, ResolutionKind } from '@arethetypeswrong/core/types';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { readJson, sha256, writeJson } from './cache.js';
import type { Tarball } from './pack.js';

/**
 * attw's `esm-only` profile, as @arethetypeswrong/cli applies it (same version of the core): the
 * packages are ESM only, so a problem found under the `node10` or `node16-cjs` resolution (a
 * CommonJS `require` of the types) does not count; every other problem does.
 */
export const ESM_ONLY_IGNORED_RESOLUTIONS: readonly ResolutionKind[] = ['node10', 'node16-cjs'];

export function countsUnderEsmOnly(problem: Problem): boolean {
  return (
    !('resolutionKind' in problem) || !ESM_ONLY_IGNORED_RESOLUTIONS.includes(problem.resolutionKind)
  );
}

/** Bump when the way results are computed changes, so cached results are not reused. */
const LINT_RULES_VERSION = 2;

function describeAttwProblem(problem: Problem): string {
  const info = problemKindInfo[problem.kind];
  const where: string[] = [];
  if ('entrypoint' in problem) where.push(`entry "${problem.entrypoint}"`);
  if ('resolutionKind' in problem) where.push(problem.resolutionKind);
  if ('fileName' in problem)
    where.push(problem.fileName.replace(/^\/node_modules\/[^/]+(\/[^/]+)?\//, ''));
  if ('typesFileName' in problem) where.push(problem.typesFileName);
  return `attw ${problem.kind}: ${info.shortDescription}${where.length > 0 ? ` (${where.join(', ')})` : ''} — ${info.docsUrl}`;
}

export async function lintTarball(tarball: Tarball): Promise<string[]> {
  const problems: string[] = [];
  const buffer = tarball.bytes.buffer.slice(
    tarball.bytes.byteOffset,
    tarball.bytes.byteOffset + tarball.bytes.byteLength,
  ) as ArrayBuffer;
  const linted = await publint({ pack: { tarball: buffer }, level: 'suggestion', strict: true });
  for (const message of linted.messages) {
    const text = formatMessage(message, linted.pkg, { color: false }) ?? message.code;
    problems.push(`publint ${message.type} ${message.code}: ${text}`);
  }
  const analysis = await checkPackage(createPackageFromTarballData(tarball.bytes));
  if (!analysis.types) {
    problems.push('attw: the package ships no types');
  } else {
    for (const problem of analysis.problems) {
      if (countsUnderEsmOnly(problem)) problems.push(describeAttwProblem(problem));
    }
  }
  return problems;
}

/**
 * publint and attw results depend only on the tarball's bytes and the tools' versions, so they
 * are cached by tarball hash.
 */
export async function lintTarballCached(
  tarball: Tarball,
  {
    cacheDirectory,
    toolVersions,
    useCache,
  }: { cacheDirectory: string; toolVersions: string; useCache: boolean },
): Promise<{ problems: string[]; cached: boolean }> {
  const key = sha256(`${LINT_RULES_VERSION}\0${toolVersions}\0${tarball.hash}`);
  const file = path.join(cacheDirectory, 'lint', `${key}.json`);
  const hit = useCache ? readJson<{ problems: string[] }>(file) : undefined;
  if (hit) return { problems: hit.problems, cached: true };
  const problems = await lintTarball(tarball);
  writeJson(file, { name: tarball.name, problems });
  return { problems, cached: false };
}
