import { randomBytes } from 'node:crypto';
import { link as linkFile, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';

export function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** Unlinks a file; never throws (a missing file or a failure both count as "not removed"). */
export async function removeQuietly(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch {
    return false;
  }
}

/** The parsed file, or undefined when it does not exist; throws when it is not valid. */
export async function readJson<T>(
  file: string,
  schema: v.GenericSchema<unknown, T>,
): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  const parsed = v.safeParse(schema, JSON.parse(text) as unknown);
  if (!parsed.success) throw new Error(`${path.basename(file)} is not a valid bot relay file`);
  return parsed.output;
}

/**
 * A temp file beside `target`, named as `@hermes/config`'s `writeFileAtomic` names its own
 * (`.<name>.<pid>.<hex>.tmp`), so one pattern finds what a killed writer left behind.
 */
function tempPathFor(target: string): string {
  const suffix = `${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  return path.join(path.dirname(target), `.${path.basename(target)}.${suffix}`);
}

/** True for a temp file of an atomic or exclusive write (`.<name>.<pid>.<hex>.tmp`). */
export function isTempFileName(name: string): boolean {
  return /^\..+\.\d+\.[0-9a-f]{12}\.tmp$/.test(name);
}

/** link(2) errors that mean the file system has no hard links (vfat, exFAT, some shares). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

export interface WriteFileExclusiveOptions {
  readonly mode: number;
  /** link(2); a parameter so the fallback for file systems without hard links can be tested. */
  readonly link?: (existingPath: string, newPath: string) => Promise<void>;
}

/**
 * Creates `target` holding `data` unless a file is already there (then false), leaving no partial
 * or temp file behind when the write fails. The bytes go to a temp file in the same folder,
 * fsynced, which is then hard-linked to `target`: link(2) refuses an existing name, so of two
 * racing writers exactly one wins, and a reader finds no file or the whole one — never a part. The
 * temp file is removed whatever happens. Where the file system has no hard links, `target` is
 * reserved by an exclusive create and the finished temp file renamed over the reservation (a
 * reader may then see it empty for a moment, never partly written).
 */
export async function writeFileExclusive(
  target: string,
  data: string,
  options: WriteFileExclusiveOptions,
): Promise<boolean> {
  const temp = tempPathFor(target);
  try {
    const handle = await open(temp, 'wx', options.mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await (options.link ?? linkFile)(temp, target);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code === undefined || !NO_HARD_LINKS.has(code)) throw error;
    }
    return await renameOverReservation(temp, target, options.mode);
  } finally {
    await removeQuietly(temp);
  }
}

async function renameOverReservation(temp: string, target: string, mode: number): Promise<boolean> {
  try {
    await (await open(target, 'wx', mode)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await rename(temp, target);
  } catch (error) {
    await removeQuietly(target); // the empty reservation is ours alone: created exclusively above
    throw error;
  }
  return true;
}
