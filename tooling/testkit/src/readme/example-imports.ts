import { isBuiltin } from 'node:module';
import ts from 'typescript';

export interface ExampleImports {
  /** Bare package names the example imports (`node:` and other built-ins excluded). */
  readonly packages: readonly string[];
  /** Relative or absolute specifiers: a stranger's copy of the example cannot resolve them. */
  readonly relative: readonly string[];
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
export function packageNameFromSpecifier(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Static imports, re-exports, dynamic `import()` and `require()` calls of an example. */
export function exampleImports(code: string): ExampleImports {
  const { importedFiles } = ts.preProcessFile(code, true, true);
  const packages = new Set<string>();
  const relative = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (fileName.startsWith('.') || fileName.startsWith('/')) relative.add(fileName);
    else if (!isBuiltin(fileName)) packages.add(packageNameFromSpecifier(fileName));
  }
  return { packages: [...packages], relative: [...relative] };
}
