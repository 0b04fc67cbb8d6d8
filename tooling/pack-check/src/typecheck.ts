import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { readJson, sha256, writeJson } from './cache.js';

/**
 * What a stranger's strict TypeScript project sees: TypeScript 5.9, `strict`, NodeNext, and no
 * `skipLibCheck` — every declaration file the public types reach is checked, third-party ones too.
 */
export function consumerCompilerOptions(scratchDirectory: string): ts.CompilerOptions {
  return {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [path.join(scratchDirectory, 'node_modules', '@types')],
    moduleDetection: ts.ModuleDetectionKind.Force,
    skipLibCheck: false,
    skipDefaultLibCheck: false,
    forceConsistentCasingInFileNames: true,
    noEmit: true,
    incremental: true,
    tsBuildInfoFile: path.join(scratchDirectory, '.pack-check.tsbuildinfo'),
  };
}

/**
 * Third-party declaration files that may fail the check without failing the package, and the one
 * package allowed to bring them in — only while its README tells consumers about `skipLibCheck`.
 * drizzle-orm's own `.d.ts` files do not type-check without `skipLibCheck` (issue 13, item 2).
 */
export const LIB_CHECK_EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ['drizzle-orm', '@hermes/session-store'],
]);

/** Errors shown per third-party package; the rest are counted. */
const THIRD_PARTY_ERRORS_SHOWN = 5;

export interface TypecheckFile {
  readonly file: string;
  /** The package the file speaks for. */
  readonly packageName: string;
  /** How to name a position in this file in a message (`README.md:42` for an example line). */
  readonly describe: (line: number, column: number) => string;
}

export interface TypecheckInput {
  readonly scratchDirectory: string;
  readonly installKey: string;
  readonly files: readonly TypecheckFile[];
  /** Every checked package with its direct dependencies (to place errors in third-party files). */
  readonly dependencies: ReadonlyMap<string, readonly string[]>;
  /** Packages whose README documents `skipLibCheck`. */
  readonly documentsSkipLibCheck: ReadonlySet<string>;
  readonly cacheDirectory: string;
  readonly useCache: boolean;
}

export interface TypecheckResult {
  readonly errors: ReadonlyMap<string, readonly string[]>;
  readonly notes: ReadonlyMap<string, readonly string[]>;
  /** Errors no package can be blamed for (options, globals, unowned files). */
  readonly general: readonly string[];
  readonly cached: boolean;
}

function thirdPartyOwner(relative: string): string | undefined {
  const marker = 'node_modules/';
  const at = relative.lastIndexOf(marker);
  if (at === -1) return undefined;
  const parts = relative.slice(at + marker.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}

export function runTypecheck(input: TypecheckInput): TypecheckResult {
  const options = consumerCompilerOptions(input.scratchDirectory);
  const rootNames = input.files.map((entry) => entry.file).sort();
  const key = sha256(
    JSON.stringify({
      typescript: ts.version,
      options,
      installKey: input.installKey,
      files: rootNames.map((file) => [file, readFileSync(file, 'utf8')]),
      exceptions: [...LIB_CHECK_EXCEPTIONS],
      documented: [...input.documentsSkipLibCheck].sort(),
      dependencies: [...input.dependencies].sort(),
    }),
  );
  const cacheFile = path.join(input.cacheDirectory, 'typecheck.json');
  type Stored = {
    key: string;
    errors: [string, string[]][];
    notes: [string, string[]][];
    general: string[];
  };
  const stored = input.useCache ? readJson<Stored>(cacheFile) : undefined;
  if (stored?.key === key) {
    return {
      errors: new Map(stored.errors),
      notes: new Map(stored.notes),
      general: stored.general,
      cached: true,
    };
  }

  const host = ts.createIncrementalCompilerHost(options);
  host.getCurrentDirectory = () => input.scratchDirectory;
  const program = ts.createIncrementalProgram({ rootNames, options, host });
  // A third-party package whose errors every dependant may ignore (the documented exception) is
  // not checked at all: drizzle-orm's declarations are most of the program's checking time.
  const unchecked = new Set<string>();
  for (const [owner, allowed] of LIB_CHECK_EXCEPTIONS) {
    const dependants = [...input.dependencies]
      .filter(([, dependencies]) => dependencies.includes(owner))
      .map(([name]) => name);
    if (
      dependants.length > 0 &&
      dependants.every((name) => name === allowed && input.documentsSkipLibCheck.has(name))
    ) {
      unchecked.add(owner);
    }
  }
  const diagnostics: ts.Diagnostic[] = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
  ];
  for (const sourceFile of program.getSourceFiles()) {
    const relative = path
      .relative(input.scratchDirectory, sourceFile.fileName)
      .split(path.sep)
      .join('/');
    const owner = thirdPartyOwner(relative);
    if (owner !== undefined && unchecked.has(owner)) continue;
    diagnostics.push(
      ...program.getSyntacticDiagnostics(sourceFile),
      ...program.getSemanticDiagnostics(sourceFile),
    );
  }
  program.emit(); // with noEmit: writes only the .tsbuildinfo, so the next run re-checks less

  const byFile = new Map(input.files.map((entry) => [path.resolve(entry.file), entry]));
  const errors = new Map<string, string[]>();
  const tolerated = new Map<string, Map<string, number>>();
  const thirdParty = new Map<string, string[]>();
  const general: string[] = [];
  for (const diagnostic of diagnostics) {
    if (diagnostic.category !== ts.DiagnosticCategory.Error) continue;
    const message = ts
      .flattenDiagnosticMessageText(diagnostic.messageText, '\n')
      .split('\n')
      .join('\n      ');
    const code = `TS${diagnostic.code}`;
    if (!diagnostic.file || diagnostic.start === undefined) {
      general.push(`${code} ${message}`);
      continue;
    }
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const fileName = path.resolve(diagnostic.file.fileName);
    const own = byFile.get(fileName);
    if (own) {
      push(
        errors,
        own.packageName,
        `types: ${own.describe(line + 1, character + 1)}: ${code} ${message}`,
      );
      continue;
    }
    const relative = path.relative(input.scratchDirectory, fileName).split(path.sep).join('/');
    const where = `${relative}(${line + 1},${character + 1})`;
    const owner = thirdPartyOwner(relative);
    if (owner && input.dependencies.has(owner)) {
      push(errors, owner, `types: ${where}: ${code} ${message}`);
      continue;
    }
    const dependants = [...input.dependencies]
      .filter(([, dependencies]) => owner !== undefined && dependencies.includes(owner))
      .map(([name]) => name);
    if (dependants.length === 0) {
      general.push(`${where}: ${code} ${message}`);
      continue;
    }
    for (const dependant of dependants) {
      if (
        owner !== undefined &&
        LIB_CHECK_EXCEPTIONS.get(owner) === dependant &&
        input.documentsSkipLibCheck.has(dependant)
      ) {
        const counts = tolerated.get(dependant) ?? new Map<string, number>();
        counts.set(owner, (counts.get(owner) ?? 0) + 1);
        tolerated.set(dependant, counts);
      } else {
        push(thirdParty, `${dependant}\0${owner}`, `${where}: ${code} ${message}`);
      }
    }
  }
  for (const [pair, messages] of thirdParty) {
    const [dependant = '', owner = ''] = pair.split('\0');
    for (const message of messages.slice(0, THIRD_PARTY_ERRORS_SHOWN)) {
      push(errors, dependant, `types (in ${owner}, a dependency): ${message}`);
    }
    if (messages.length > THIRD_PARTY_ERRORS_SHOWN) {
      push(
        errors,
        dependant,
        `types (in ${owner}, a dependency): … and ${messages.length - THIRD_PARTY_ERRORS_SHOWN} more errors in ${owner}'s declarations (${messages.length} in all)`,
      );
    }
  }
  const notes = new Map<string, string[]>();
  for (const owner of unchecked) {
    push(
      notes,
      LIB_CHECK_EXCEPTIONS.get(owner) as string,
      `${owner}'s own declarations are not checked: the README documents skipLibCheck`,
    );
  }
  for (const [name, counts] of tolerated) {
    for (const [owner, count] of counts) {
      push(
        notes,
        name,
        `${count} error(s) inside ${owner}'s own declarations tolerated: the README documents skipLibCheck`,
      );
    }
  }
  const result = { errors, notes, general, cached: false };
  writeJson(cacheFile, { key, errors: [...errors], notes: [...notes], general });
  return result;
}
