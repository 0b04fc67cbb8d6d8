import { exampleImports, testReadmeExamples } from '@hermes/testkit';

// The example on @hermes/agent's rail runs in @hermes/agent's tests: this package cannot depend
// on the agent (the agent depends on it).
testReadmeExamples({
  packageRoot: new URL('..', import.meta.url),
  select: (example) => !exampleImports(example.code).packages.includes('@hermes/agent'),
});
