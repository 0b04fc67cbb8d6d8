import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, startModelServer, tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function fencedBlocks(readme: string, language: string): string[] {
  return [...readme.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] as string,
  );
}

let written = 0;

/** Runs an example as a `.ts` file inside the package (so its imports resolve to this workspace). */
async function run(example: string, env: NodeJS.ProcessEnv) {
  const folder = path.join(packageRoot, 'test-results', `readme-${process.pid}`);
  await mkdir(folder, { recursive: true });
  onTestFinished(() => rm(folder, { recursive: true, force: true }));
  written += 1;
  const file = path.join(folder, `example-${written}.ts`);
  await writeFile(file, example);
  const child = await spawnProcess({
    command: process.execPath,
    args: ['--conditions=@hermes/source', '--import', 'tsx', file],
    cwd: packageRoot,
    env,
  });
  return { exit: await child.exited, stdout: child.stdout(), stderr: child.stderr() };
}

describe('README', () => {
  it('names every imported package in the install line', async () => {
    const readme = await readFile(path.join(packageRoot, 'README.md'), 'utf8');
    const install = fencedBlocks(readme, 'sh')[0] ?? '';
    for (const example of fencedBlocks(readme, 'ts'))
      for (const [, specifier] of example.matchAll(/from '([^']+)'/g))
        if (!specifier?.startsWith('node:')) expect(install).toContain(specifier);
  });

  it('runs the embedding example against a configured home and prints the streamed turn', async () => {
    const readme = await readFile(path.join(packageRoot, 'README.md'), 'utf8');
    const [example] = fencedBlocks(readme.slice(readme.indexOf('## Example')), 'ts');
    expect(example?.split('\n').filter((line) => line.trim() !== '').length).toBeLessThan(20);
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
    onTestFinished(() => model.close());
    await writeFile(
      path.join(home, 'config.yaml'),
      `model:\n  base_url: ${model.baseUrl}\n  default: test-model\nterminal:\n  cwd: ${workdir}\n`,
    );
    const { OPENAI_API_KEY: _openai, OPENROUTER_API_KEY: _openrouter, ...env } = process.env;
    const result = await run(example as string, { ...env, HERMES_HOME: home });
    expect({ exit: result.exit, stderr: result.stderr }).toEqual({
      exit: { code: 0, signal: null },
      stderr: '',
    });
    expect(result.stdout).toBe('It says hello.\ncompleted after 2 model calls\n');
    const second = model.modelRequests[1]?.body as { messages: { content: string }[] };
    expect(JSON.stringify(second.messages)).toContain('hello from the notes');
  });

  it('prints what the README shows in a fresh home with no model configured', async () => {
    const readme = await readFile(path.join(packageRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Example'));
    const [example] = fencedBlocks(section, 'ts');
    const [shown] = fencedBlocks(section, 'text');
    const home = (await tempHome()).path;
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !/API_KEY$/.test(name) && name !== 'HERMES_HOME',
      ),
    );
    const result = await run(example as string, { ...env, HOME: home });
    expect(result.exit).toEqual({ code: 0, signal: null });
    expect(result.stdout).toBe(shown);
  });

  it('runs the custom-tool example', async () => {
    const readme = await readFile(path.join(packageRoot, 'README.md'), 'utf8');
    const [example] = fencedBlocks(readme.slice(readme.indexOf('**Your own tools.**')), 'ts');
    const result = await run(example as string, process.env);
    expect({ exit: result.exit, stderr: result.stderr }).toEqual({
      exit: { code: 0, signal: null },
      stderr: '',
    });
  });

  it('runs the completion-delivery example in a fresh home and prints what the README shows', async () => {
    const readme = await readFile(path.join(packageRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('**In the background.**'));
    const [example] = fencedBlocks(section, 'ts');
    const [shown] = fencedBlocks(section, 'text');
    const home = (await tempHome()).path;
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name !== 'HERMES_HOME'),
    );
    const result = await run(example as string, { ...env, HOME: home });
    expect({ exit: result.exit, stderr: result.stderr }).toEqual({
      exit: { code: 0, signal: null },
      stderr: '',
    });
    expect(result.stdout).toBe(shown);
  });

  it('runs review-engine’s example on this rail and prints what its README shows', async () => {
    const readme = await readFile(
      path.join(packageRoot, '..', 'review-engine', 'README.md'),
      'utf8',
    );
    const section = readme.slice(readme.indexOf("**With `@hermes/agent`'s rail:**"));
    const [example] = fencedBlocks(section, 'ts');
    const [shown] = fencedBlocks(section, 'text');
    expect(example).toContain('createDelegationRail');
    const home = (await tempHome()).path;
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name !== 'HERMES_HOME'),
    );
    const result = await run(example as string, { ...env, HOME: home });
    expect({ exit: result.exit, stderr: result.stderr }).toEqual({
      exit: { code: 0, signal: null },
      stderr: '',
    });
    expect(result.stdout).toBe(shown);
  });
});
