import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic, writeFileAtomicSync } from './atomic-write.js';

const writers = {
  async: writeFileAtomic,
  sync: async (...args: Parameters<typeof writeFileAtomicSync>) => writeFileAtomicSync(...args),
};

describe.each(Object.entries(writers))('writeFileAtomic (%s)', (_name, write) => {
  it('replaces the whole file, private by default, leaving no temp file', async () => {
    const dir = (await tempHome()).path;
    const target = path.join(dir, 'state.json');
    writeFileSync(target, 'old contents that are longer than the new ones');
    await write(target, '{"v":2}');
    expect(readFileSync(target, 'utf8')).toBe('{"v":2}');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('honours an explicit mode and writes bytes as given', async () => {
    const dir = (await tempHome()).path;
    const target = path.join(dir, 'blob.bin');
    await write(target, new Uint8Array([0, 255, 10]), { mode: 0o644 });
    expect([...readFileSync(target)]).toEqual([0, 255, 10]);
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });

  it('removes its temp file and rethrows when the rename fails', async () => {
    const dir = (await tempHome()).path;
    // A non-empty directory in the way makes the final rename fail after the temp file exists.
    const target = path.join(dir, 'occupied');
    mkdirSync(target);
    writeFileSync(path.join(target, 'keep'), 'x');
    await expect(write(target, 'data')).rejects.toThrow();
    expect(readdirSync(dir)).toEqual(['occupied']);
    expect(readFileSync(path.join(target, 'keep'), 'utf8')).toBe('x');
  });
});
