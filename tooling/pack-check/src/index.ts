export { type CheckOptions, type CheckResult, checkPackages, type PackageReport } from './check.js';
export { compareOutput, type OutputComparison, WILDCARD } from './output.js';
export {
  EXAMPLE_LANGUAGES,
  exampleImports,
  OUTPUT_LANGUAGE,
  type ParsedReadme,
  parseFencedBlocks,
  parseReadme,
  type ReadmeExample,
} from './readme.js';
