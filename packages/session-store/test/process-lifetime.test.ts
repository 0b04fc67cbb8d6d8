import path from 'node:path';
import { withHome } from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/index.js';
import { runFixture } from './processes.js';

describe('store lifetime', () => {
  it('an open store does not keep the process alive (the checkpoint timer and thread are unref-ed)', async () => {
    const home = await tempHome();
    const child = await runFixture('open-and-leave.ts', [path.join(home.path, 'state.db')]);
    const exit = await child.exited;
    expect(exit.code, child.stderr()).toBe(0);
    expect(child.stdout()).toContain('opened');
    expect(child.stdout()).toContain('checkpointed'); // the background thread had started
  }, 60_000);

  it('defaults to state.db in the active Hermes home', async () => {
    const home = await tempHome();
    const store = await withHome(home.path, () => openSessionStore());
    try {
      expect(store.path).toBe(path.join(home.path, 'state.db'));
    } finally {
      await store.close();
    }
  });
});
