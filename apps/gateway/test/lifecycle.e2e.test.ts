import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { identifyGateway, queryGatewayStatus, readRuntimeStatus } from '@hermes/control-socket';
import { spawnProcess, startModelServer, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  GATEWAY_BIN,
  gatewayEnv,
  modelConfig,
  readEvents,
  startGateway,
  upgradeRefusal,
  writeConfig,
} from './gateway-process.js';

describe('gateway process lifecycle', () => {
  it('starts with no config, prints URL, home and socket, and answers identify and status from the live process', async () => {
    const gateway = await startGateway();
    const stdout = gateway.process.stdout();
    expect(stdout).toContain(`home:           ${gateway.home}`);
    expect(stdout).toContain(`control socket: ${path.join(gateway.home, 'gateway.sock')}`);
    expect(stdout).toMatch(/model: +not configured — set model\.base_url/);

    expect((await gateway.json('/health')).body).toEqual({ status: 'ok', platform: 'hermes' });

    const identity = await identifyGateway(gateway.home);
    expect(identity).toMatchObject({
      kind: 'hermes-gateway',
      pid: gateway.process.pid,
      protocol: 1,
      profile: 'default',
    });
    const status = (await queryGatewayStatus(gateway.home)) as Record<string, unknown>;
    expect(status).toMatchObject({
      gateway_state: 'running',
      answering_pid: gateway.process.pid,
      active_turns: 0,
      active_agents: 0,
      queue_depths: { runs_running: 0, delegation_completions: 0 },
      watchdog_strikes: 0,
      // No messaging platform: nothing to restore, so nothing is held behind the gate.
      platforms: [],
      restore_gate: 'open',
    });
    expect(typeof status.uptime_s).toBe('number');
    expect(typeof status.event_loop_delay_p99_ms).toBe('number');
  });

  it('refuses a second gateway on the same home with the PID claim message and exit 1', async () => {
    const first = await startGateway();
    const second = await spawnProcess({
      command: process.execPath,
      args: [GATEWAY_BIN, '--port', '0'],
      env: gatewayEnv(first.home),
    });
    const exit = await second.exited;
    expect(exit.code).toBe(1);
    expect(second.stderr()).toContain(
      `Another gateway instance is already running (PID ${first.process.pid}, HERMES_HOME=`,
    );
    // The first one is untouched.
    expect((await first.json('/health')).status).toBe(200);
    expect((await identifyGateway(first.home))?.pid).toBe(first.process.pid);
  });

  it('stops on SIGTERM: socket and PID file removed, state stopped, exit 0', async () => {
    const gateway = await startGateway();
    expect(existsSync(path.join(gateway.home, 'gateway.pid'))).toBe(true);
    gateway.process.kill('SIGTERM');
    const exit = await gateway.process.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(gateway.home, 'gateway.pid'))).toBe(false);
    expect(existsSync(path.join(gateway.home, 'gateway.sock'))).toBe(false);
    const state = await readRuntimeStatus(gateway.home);
    expect(state).toMatchObject({ gateway_state: 'stopped', exit_reason: 'SIGTERM' });
    expect(await identifyGateway(gateway.home)).toBeNull();
  });

  it('keeps serving, and stops on SIGTERM, once the reader of its stderr has gone (a closed pipe): the log file still gets every line', async () => {
    const gateway = await startGateway();
    // As `hermes-gateway | head` or a dead log collector: writes to stderr now fail with EPIPE.
    gateway.process.child.stderr?.destroy();
    // Each request is logged (the tests run at debug), so each meets the closed pipe.
    for (let index = 0; index < 5; index += 1)
      expect((await gateway.json('/health')).status).toBe(200);
    gateway.process.kill('SIGTERM');
    expect((await gateway.process.exited).code).toBe(0);
    const log = await readFile(path.join(gateway.home, 'logs', 'gateway.log'), 'utf8');
    expect(log).toContain('"msg":"gateway stopped"');
    expect(log).not.toContain('EPIPE');
  });

  it('stops on SIGINT the same way', async () => {
    const gateway = await startGateway();
    gateway.process.kill('SIGINT');
    expect((await gateway.process.exited).code).toBe(0);
    expect((await readRuntimeStatus(gateway.home))?.gateway_state).toBe('stopped');
  });

  it('lets a running turn finish within the drain budget, refusing new turns meanwhile', async () => {
    const model = await startModelServer({
      script: [{ text: 'finished after the signal', delayMs: 2500 }],
    });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl));
    const gateway = await startGateway({ home });
    const created = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = created.body.session.id;
    const chat = gateway.json<{ message: { content: string } }>(`/api/sessions/${id}/chat`, {
      method: 'POST',
      json: { message: 'take your time' },
    });
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // A keep-alive connection opened before the signal sees the refusal of new turns.
    const keptAlive = await gateway.json(`/api/sessions/${id}`);
    expect(keptAlive.status).toBe(200);
    gateway.process.kill('SIGTERM');
    await gateway.process.waitForLine(/gateway stopping/);
    const refused = await gateway
      .json(`/api/sessions/${id}/chat`, { method: 'POST', json: { message: 'one more' } })
      .catch((error: unknown) => ({ status: 'refused', body: String(error) }));
    if (refused.status !== 'refused') {
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error: { code: 'gateway_draining' } });
    }
    const answer = await chat;
    expect(answer.status).toBe(200);
    expect(answer.body.message.content).toBe('finished after the signal');
    expect((await gateway.process.exited).code).toBe(0);
    expect(model.modelRequests).toHaveLength(1);

    // The finished turn is in the store, and the next gateway on this home serves it.
    const next = await startGateway({ home });
    const messages = await next.json<{ data: { role: string; content: string }[] }>(
      `/api/sessions/${id}/messages`,
    );
    expect(messages.body.data.map((message) => [message.role, message.content])).toEqual([
      ['user', 'take your time'],
      ['assistant', 'finished after the signal'],
    ]);
  });

  it('keeps serving while it drains: /health says draining, new turns get 503 gateway_draining, the running run still answers and streams to its end; then it closes and exits 0', async () => {
    const model = await startModelServer({
      script: [{ text: 'finished during the drain', delayMs: 4000 }],
    });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl));
    const gateway = await startGateway({ home });
    const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = session.body.session.id;
    const run = await gateway.json<{ id: string }>('/v1/runs', {
      method: 'POST',
      json: { input: 'take your time', session_id: id },
    });
    expect(run.status).toBe(202);
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    gateway.process.kill('SIGTERM');
    await gateway.process.waitForLine(/gateway stopping/);

    for (const probe of ['/health', '/v1/health'])
      expect((await gateway.json(probe)).body, probe).toEqual({
        status: 'draining',
        platform: 'hermes',
      });
    const newTurns = [
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'one more' }] }],
      ['/v1/responses', { input: 'one more' }],
      ['/v1/runs', { input: 'one more' }],
      [`/api/sessions/${id}/chat`, { message: 'one more' }],
      [`/api/sessions/${id}/chat/stream`, { message: 'one more' }],
    ] as const;
    for (const [pathname, json] of newTurns) {
      const refused = await gateway.json(pathname, { method: 'POST', json });
      expect(refused.status, pathname).toBe(503);
      expect(refused.body, pathname).toEqual({
        error: {
          message: expect.stringContaining('shutting down'),
          type: 'server_error',
          param: null,
          code: 'gateway_draining',
        },
      });
    }
    // No new browser controller either: registering and the controller socket are refused.
    const register = await gateway.json('/v1/browser-control/register', {
      method: 'POST',
      json: {},
    });
    expect(register.status).toBe(503);
    expect(register.body).toMatchObject({ error: { code: 'gateway_draining' } });
    const upgrade = await upgradeRefusal(`${gateway.url}/v1/browser-control/ws`);
    expect(upgrade.status).toBe(503);
    expect(JSON.parse(upgrade.body)).toMatchObject({
      error: { code: 'gateway_draining', type: 'server_error', param: null },
    });
    // The running run is still there to ask about, and its events follow it to the end.
    const running = await gateway.json<{ status: string }>(`/v1/runs/${run.body.id}`);
    expect(running.body.status).toBe('running');
    const events = await readEvents(await gateway.request(`/v1/runs/${run.body.id}/events`));
    const named = events.filter((event) => event.event !== ':');
    expect(named.map((event) => event.event).slice(-2)).toEqual(['run.completed', 'done']);
    expect(JSON.parse(named.at(-2)?.data ?? '{}')).toMatchObject({
      final_response: 'finished during the drain',
    });
    expect((await gateway.process.exited).code).toBe(0);
    expect(model.modelRequests).toHaveLength(1);
  });

  it('interrupts a turn that outlives the drain budget, keeps what it said, and still exits 0', async () => {
    const model = await startModelServer({
      script: [{ text: 'x'.repeat(400), chunkSize: 4, chunkDelayMs: 50 }],
    });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl));
    const gateway = await startGateway({ home, args: ['--drain-timeout', '0.5'] });
    const created = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = created.body.session.id;
    const chat = gateway.json<{ runtime: { status: string }; message: { content: string } }>(
      `/api/sessions/${id}/chat`,
      { method: 'POST', json: { message: 'long answer please' } },
    );
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 300));
    gateway.process.kill('SIGTERM');
    const answer = await chat;
    expect(answer.status).toBe(200);
    expect(answer.body.runtime.status).toBe('interrupted');
    expect(answer.body.message.content.length).toBeGreaterThan(0);
    expect(answer.body.message.content.length).toBeLessThan(400);
    expect((await gateway.process.exited).code).toBe(0);
    const log = await readFile(path.join(home, 'logs', 'gateway.log'), 'utf8');
    expect(log).toContain('drain timed out; interrupting running turns');
  });

  it('exits 78 when config.yaml does not parse, naming the file and line', async () => {
    const home = (await tempHome()).path;
    await writeFile(path.join(home, 'config.yaml'), 'model:\n  default: [unclosed\n');
    const child = await spawnProcess({
      command: process.execPath,
      args: [GATEWAY_BIN, '--port', '0'],
      env: gatewayEnv(home),
    });
    expect((await child.exited).code).toBe(78);
    expect(child.stderr()).toContain(path.join(home, 'config.yaml'));
    expect(existsSync(path.join(home, 'gateway.pid'))).toBe(false);
  });

  it('refuses to listen beyond loopback without an API key (exit 78) and says how to fix it', async () => {
    const home = (await tempHome()).path;
    const child = await spawnProcess({
      command: process.execPath,
      args: [GATEWAY_BIN, '--port', '0', '--host', '0.0.0.0'],
      env: gatewayEnv(home),
    });
    expect((await child.exited).code).toBe(78);
    expect(child.stderr()).toContain('Refusing to listen on 0.0.0.0');
    expect(child.stderr()).toContain('API_SERVER_KEY');
    expect(existsSync(path.join(home, 'gateway.pid'))).toBe(false);
  });

  it('reads ports and seconds from decimal digits only: 0x0, 0e0 or +0 are refused, not taken for numbers', async () => {
    const refusedArguments = [
      ['--port', '0x0'],
      ['--port', '0e0'],
      ['--port', '+0'],
      ['--drain-timeout', '0x1e'],
      ['--drain-timeout', '1e1'],
    ];
    for (const args of refusedArguments) {
      const home = (await tempHome()).path;
      const child = await spawnProcess({
        command: process.execPath,
        args: [GATEWAY_BIN, ...(args[0] === '--port' ? [] : ['--port', '0']), ...args],
        env: gatewayEnv(home),
      });
      const exit = await Promise.race([
        child.exited,
        child.waitForLine(/listening on/, 15_000).then(() => 'started' as const),
      ]);
      expect(exit, args.join(' ')).toEqual({ code: 1, signal: null });
      expect(child.stderr(), args.join(' ')).toContain(`option '${args[0]} <`);
    }
    for (const value of ['0x0', '0e0', '+0']) {
      const child = await spawnProcess({
        command: process.execPath,
        args: [GATEWAY_BIN],
        env: gatewayEnv((await tempHome()).path, { API_SERVER_PORT: value }),
      });
      expect((await child.exited).code, value).toBe(78);
      expect(child.stderr()).toContain('API_SERVER_PORT must be a port number');
    }
  });

  it('takes the port from API_SERVER_PORT and refuses a malformed one with exit 78', async () => {
    const home = (await tempHome()).path;
    const child = await spawnProcess({
      command: process.execPath,
      args: [GATEWAY_BIN],
      env: gatewayEnv(home, { API_SERVER_PORT: 'eighty' }),
    });
    expect((await child.exited).code).toBe(78);
    expect(child.stderr()).toContain('API_SERVER_PORT must be a port number');
  });
});
