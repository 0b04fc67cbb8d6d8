import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  exampleImports,
  type ReadmeExample,
  runReadmeExample,
  startModelServer,
  tempHome,
  testReadmeExamples,
  workspaceSourceNodeArgs,
} from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const usesAgent = (example: ReadmeExample) =>
  exampleImports(example.code).packages.includes('@hermes/agent');

// Every example of this README, in a fresh home (the embedding example then has no model).
const readme = testReadmeExamples({ packageRoot });
// review-engine's example on this package's rail (review-engine cannot depend on the agent).
testReadmeExamples({ packageRoot, readme: '../review-engine/README.md', select: usesAgent });

describe('the README embedding example', () => {
  it('streams the turn and ends with "completed after 2 model calls" once a model is configured', async () => {
    const example = readme.examples[0] as ReadmeExample;
    expect(example.code).toContain('agent.runTurn');
    expect(example.code.split('\n').filter((line) => line.trim() !== '').length).toBeLessThan(20);
    const home = (await tempHome()).path;
    const workdir = path.join(home, 'work');
    await mkdir(workdir);
    await writeFile(path.join(workdir, 'notes.txt'), 'hello from the notes\n');
    const model = await startModelServer({
      script: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'It says hello.' },
      ],
    });
    try {
      await writeFile(
        path.join(home, 'config.yaml'),
        `model:\n  base_url: ${model.baseUrl}\n  default: test-model\nterminal:\n  cwd: ${workdir}\n`,
      );
      const directory = path.join(packageRoot, 'test-results', `readme-configured-${process.pid}`);
      onTestFinished(() => rm(directory, { recursive: true, force: true }));
      const run = await runReadmeExample(example, {
        directory,
        nodeArgs: workspaceSourceNodeArgs(),
        env: { HERMES_HOME: home },
      });
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toBe('It says hello.\ncompleted after 2 model calls\n');
      const second = model.modelRequests[1]?.body as { messages: { content: string }[] };
      expect(JSON.stringify(second.messages)).toContain('hello from the notes');
    } finally {
      await model.close();
    }
  });
});
