import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isProcessRunning, spawnProcess } from './spawn-process.js';
import { tempHome } from './temp-home.js';

describe('spawnProcess', () => {
  it('waits for a readiness line and parses a port from it', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: [
        '-e',
        "const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log('listening on '+s.address().port))",
      ],
      readyLine: /listening on (\d+)/,
    });
    const match = await child.waitForLine(/listening on (\d+)/);
    expect(Number(match[1])).toBeGreaterThan(0);
    const exit = await child.stop();
    expect(exit.signal).toBe('SIGTERM');
  });

  it('kills the whole process group, grandchildren included', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: [
        '-e',
        "const c=require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});console.log('grandchild '+c.pid);setInterval(()=>{},1000)",
      ],
      readyLine: /grandchild (\d+)/,
    });
    const grandchild = Number((await child.waitForLine(/grandchild (\d+)/))[1]);
    await child.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isProcessRunning(grandchild)).toBe(false);
  });

  it('reports an early exit instead of waiting for the readiness line forever', async () => {
    await expect(
      spawnProcess({
        command: process.execPath,
        args: ['-e', 'console.error("boom"); process.exit(3)'],
        readyLine: 'never printed',
      }),
    ).rejects.toThrow(/exited.*boom/s);
  });
});

describe('tempHome', () => {
  it('creates a private empty folder and removes it', async () => {
    const home = await tempHome();
    expect(existsSync(home.path)).toBe(true);
    await home.remove();
    expect(existsSync(home.path)).toBe(false);
  });
});
