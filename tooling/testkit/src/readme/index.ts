// README examples (docs/releasing.md): extraction, install lines, running and output comparison.
// No vitest here: tools outside a test run (tooling/pack-check) import this as
// `@hermes/testkit/readme`.
export { compareOutput, type OutputComparison, WILDCARD } from './compare-output.js';
export {
  type ExampleImports,
  exampleImports,
  packageNameFromSpecifier,
} from './example-imports.js';
export { type FencedBlock, parseFencedBlocks } from './fenced-blocks.js';
export {
  type InstallCommand,
  installedPackages,
  installLineProblems,
  packageNameFromSpec,
} from './install-lines.js';
export {
  EXAMPLE_LANGUAGES,
  LEAD_IN_MAX_LENGTH,
  OUTPUT_LANGUAGE,
  type ParsedReadme,
  parseReadme,
  type ReadmeExample,
  type ReadmeFile,
  readReadmeExamples,
} from './parse-readme.js';
export {
  freshExampleEnvironment,
  killRunningExamples,
  README_EXAMPLE_TIMEOUT_MS,
  type ReadmeRun,
  type RunReadmeExampleOptions,
  type RunReadmeProgramOptions,
  runReadmeExample,
  runReadmeProgram,
  type WrittenExample,
  workspaceSourceNodeArgs,
  writeReadmeExample,
} from './run-example.js';
export { expectReadmeOutput, type RunProblemOptions, readmeRunProblems } from './run-problems.js';
