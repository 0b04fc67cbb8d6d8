import { execFileSync } from 'node:child_process';
import { chmod, mkdir, rename } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { SOCKET_FILE_NAME, SOCKET_POINTER_FILE_NAME } from './constants.js';
import { identifyGateway } from './control-client.js';
import { type RaceAgent, type RacePause, startRaceAgent } from './test-race-agent.js';

/** Until `agent`'s operation `id` is done or it waits for a takeover token another holds. */
function doneOrWaitingForToken(agent: RaceAgent, id: number) {
  return agent.waitFor(
    (event) => event.event === 'token-busy' || (event.event === 'done' && event.id === id),
  );
}

/** A home deep enough that its socket is bound in the temp folder and found through a pointer. */
async function deepHome(): Promise<string> {
  const root = await tempHome();
  const home = path.join(root.path, 'd'.repeat(60), 'e'.repeat(60));
  await mkdir(home, { recursive: true });
  return home;
}

/** A socket node nobody listens on any more, as a crashed gateway leaves it. */
async function plantDeadSocket(socketPath: string): Promise<void> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  await chmod(socketPath, 0o600);
  await rename(socketPath, `${socketPath}.aside`);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rename(`${socketPath}.aside`, socketPath);
}

type StartOutcome = { started: true; bindPath: string } | { started: false; message: string };

/**
 * A start that reports success must be the server answering for the home afterwards: the old
 * code reported success for a server whose socket (or pointer) another process then removed or
 * replaced, leaving it unreachable.
 */
async function expectEveryStartedServerAnswers(
  home: string,
  outcomes: ReadonlyArray<readonly [RaceAgent, StartOutcome]>,
): Promise<void> {
  const answering = (await identifyGateway(home))?.pid ?? null;
  const started = outcomes.filter(([, outcome]) => outcome.started).map(([agent]) => agent.pid);
  expect(started).toEqual(answering === null ? [] : [answering]);
}

describe('the socket path, across processes', () => {
  it('closing an old server never removes the socket a successor put on the path meanwhile', async () => {
    const home = (await tempHome()).path;
    const bindPath = path.join(home, SOCKET_FILE_NAME);
    // The old server stops after judging the node at the path its own, right before removing it.
    const old = await startRaceAgent({
      pauses: [{ label: 'old-removes', calls: ['rm', 'unlink'], path: bindPath }],
    });
    expect(await old.run('startServer', { home })).toMatchObject({ started: true, bindPath });
    const closing = old.start('closeServer');
    await old.paused('old-removes');

    const successor = await startRaceAgent();
    const starting = successor.start('startServer', { home });
    await doneOrWaitingForToken(successor, starting);
    await old.resume('old-removes');
    await old.done(closing);

    const outcome = (await successor.done(starting)) as StartOutcome;
    expect(outcome.started).toBe(true);
    await expectEveryStartedServerAnswers(home, [[successor, outcome]]);
  });

  it('closing an old server never removes the pointer file a successor for the same deep home wrote meanwhile', async () => {
    const home = await deepHome();
    const pointerFile = path.join(home, SOCKET_POINTER_FILE_NAME);
    const old = await startRaceAgent({
      pauses: [{ label: 'old-removes-pointer', calls: ['rm', 'unlink'], path: pointerFile }],
    });
    expect(await old.run('startServer', { home })).toMatchObject({ started: true });
    const closing = old.start('closeServer');
    await old.paused('old-removes-pointer');

    const successor = await startRaceAgent();
    const starting = successor.start('startServer', { home });
    await doneOrWaitingForToken(successor, starting);
    await old.resume('old-removes-pointer');
    await old.done(closing);

    const outcome = (await successor.done(starting)) as StartOutcome;
    expect(outcome.started).toBe(true);
    await expectEveryStartedServerAnswers(home, [[successor, outcome]]);
  });

  it('of two starts that both found a dead node on the path, only one publishes and the other is refused, never replaced', async () => {
    const home = (await tempHome()).path;
    const bindPath = path.join(home, SOCKET_FILE_NAME);
    await plantDeadSocket(bindPath);
    // The first start stops after judging the node dead, right before moving its own over it.
    const replaces: RacePause = { label: 'replaces', calls: ['rename'], arg: 1, path: bindPath };
    const first = await startRaceAgent({ pauses: [replaces] });
    const firstStart = first.start('startServer', { home });
    await first.paused('replaces');

    const second = await startRaceAgent();
    const secondStart = second.start('startServer', { home });
    await doneOrWaitingForToken(second, secondStart);
    await first.resume('replaces');

    const firstOutcome = (await first.done(firstStart)) as StartOutcome;
    const secondOutcome = (await second.done(secondStart)) as StartOutcome;
    expect(firstOutcome.started).toBe(true);
    await expectEveryStartedServerAnswers(home, [
      [first, firstOutcome],
      [second, secondOutcome],
    ]);
  });

  it('the exit hook of a server never removes the pointer file of a server that started while it exited', async () => {
    const home = await deepHome();
    const pointerFile = path.join(home, SOCKET_POINTER_FILE_NAME);
    const fifo = path.join((await tempHome()).path, 'exit.fifo');
    execFileSync('mkfifo', [fifo]);
    const exiting = await startRaceAgent({
      pauses: [{ label: 'exit-removes-pointer', calls: ['rmSync'], path: pointerFile, fifo }],
    });
    expect(await exiting.run('startServer', { home })).toMatchObject({ started: true });
    exiting.start('exit');
    await exiting.paused('exit-removes-pointer');

    const next = await startRaceAgent();
    const starting = next.start('startServer', { home });
    await doneOrWaitingForToken(next, starting);
    await exiting.resume('exit-removes-pointer');
    expect(await exiting.exited).toBe(0);

    const outcome = (await next.done(starting)) as StartOutcome;
    await expectEveryStartedServerAnswers(home, [[next, outcome]]);
  });
});
