import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { READ_SLICE_BYTES, readFileHashed } from './read-file-hashed.js';

async function fileWith(data: Uint8Array) {
  const home = await tempHome('hermes-read-hashed-');
  const filePath = path.join(home.path, 'artifact.bin');
  await writeFile(filePath, data);
  return filePath;
}

describe('readFileHashed', () => {
  it('returns the exact bytes with their SHA-256 across read slices', async () => {
    for (const size of [1, READ_SLICE_BYTES, 2 * READ_SLICE_BYTES + 5]) {
      const data = randomBytes(size);
      const read = await readFileHashed(await fileWith(data), size);
      expect(read).not.toBeNull();
      expect(read!.data.equals(data)).toBe(true);
      expect(read!.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('handles an empty file', async () => {
    const read = await readFileHashed(await fileWith(new Uint8Array(0)), 0);
    expect(read?.sha256).toBe(createHash('sha256').digest('hex'));
  });

  it('refuses a file whose size is not the expected one without reading it', async () => {
    expect(await readFileHashed(await fileWith(randomBytes(10)), 11)).toBeNull();
    expect(await readFileHashed(await fileWith(randomBytes(12)), 11)).toBeNull();
  });

  it('rejects with ENOENT for a missing file', async () => {
    const home = await tempHome('hermes-read-hashed-');
    await expect(readFileHashed(path.join(home.path, 'missing'), 1)).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
