import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { isTempFileName, writeFileExclusive } from './bot-relay-files.js';

const refuseLinks = (code: string) => async () => {
  throw Object.assign(new Error(`${code}: link`), { code });
};

describe('writeFileExclusive', () => {
  it('creates the file whole, once: a second writer gets false and the first content stays', async () => {
    const folder = (await tempHome()).path;
    const target = path.join(folder, 'reply.json');
    const results = await Promise.all(
      ['first', 'second', 'third'].map((text) => writeFileExclusive(target, text, { mode: 0o600 })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(['first', 'second', 'third']).toContain(await readFile(target, 'utf8'));
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual(['reply.json']); // no temp file left
  });

  it('writes in place where the file system has no hard links, still only once', async () => {
    const folder = (await tempHome()).path;
    const target = path.join(folder, 'reply.json');
    const options = { mode: 0o600, link: refuseLinks('EPERM') };
    expect(await writeFileExclusive(target, 'first', options)).toBe(true);
    expect(await writeFileExclusive(target, 'second', options)).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('first');
    expect(await readdir(folder)).toEqual(['reply.json']);
  });

  it('without hard links, removes its reservation when the finished file cannot be moved in', async () => {
    const folder = (await tempHome()).path;
    const target = path.join(folder, 'reply.json');
    // The temp file vanishes before the rename (as if swept): the rename fails with ENOENT.
    const link = async (temp: string) => {
      await unlink(temp);
      throw Object.assign(new Error('EPERM: link'), { code: 'EPERM' });
    };
    await expect(writeFileExclusive(target, 'text', { mode: 0o600, link })).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(await readdir(folder)).toEqual([]);
  });

  it('leaves nothing behind when linking fails for another reason', async () => {
    const folder = (await tempHome()).path;
    const target = path.join(folder, 'reply.json');
    await expect(
      writeFileExclusive(target, 'text', { mode: 0o600, link: refuseLinks('EIO') }),
    ).rejects.toMatchObject({ code: 'EIO' });
    expect(await readdir(folder)).toEqual([]);
  });

  it('names its temp files so the stale sweep recognises them', () => {
    expect(isTempFileName('.abc.json.1234.0123456789ab.tmp')).toBe(true);
    expect(isTempFileName('abc.json')).toBe(false);
    expect(isTempFileName('.abc.json')).toBe(false);
  });
});
