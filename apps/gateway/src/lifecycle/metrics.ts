import type { AgentEvent } from '@hermes/agent';
import { PLATFORM_FLEET_STATES, type PlatformStatus } from '@hermes/supervisor';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricsSources {
  readonly platforms: () => readonly PlatformStatus[];
  readonly obligationBacklog: () => number;
  readonly inboundJournal: () => number;
  readonly delegationBacklog: () => { pending: number; running: number };
  readonly activeTurns: () => number;
  readonly loopDelay: () => { p99Ms: number; maxMs: number };
  readonly watchdogStrikes: () => number | null;
}

/**
 * The gateway's Prometheus metrics (`GET /metrics`), on a registry of its own: turns, tool calls,
 * model latency from the agent's events; adapter state, reconnect attempts, the obligation and
 * delegation backlogs, event-loop delay and watchdog strikes read live at each scrape; plus the
 * process defaults (`process_*`, `nodejs_*`).
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #turns: Counter<'kind' | 'status'>;
  readonly #toolCalls: Counter<'tool' | 'outcome'>;
  readonly #modelLatency: Histogram<'provider'>;
  readonly #reconnects: Counter<'platform'>;
  readonly #reconnectsSeen = new Map<string, number>();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#turns = new Counter({
      name: 'hermes_turns_total',
      help: 'Model turns finished, by surface kind and status (completed, failed, interrupted, refused).',
      labelNames: ['kind', 'status'],
      registers,
    });
    this.#toolCalls = new Counter({
      name: 'hermes_tool_calls_total',
      help: 'Tool calls finished, by tool and outcome (ok, error).',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.#modelLatency = new Histogram({
      name: 'hermes_model_call_duration_seconds',
      help: 'Time from a model call to its completed message.',
      labelNames: ['provider'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    this.#reconnects = new Counter({
      name: 'hermes_platform_reconnect_attempts_total',
      help: 'Reconnect attempts of queued platforms since the gateway started.',
      labelNames: ['platform'],
      registers,
      collect: () => {
        for (const status of sources.platforms()) {
          const seen = this.#reconnectsSeen.get(status.platform) ?? 0;
          if (status.reconnectAttempts > seen)
            this.#reconnects.inc({ platform: status.platform }, status.reconnectAttempts - seen);
          else if (seen === 0) this.#reconnects.inc({ platform: status.platform }, 0);
          this.#reconnectsSeen.set(status.platform, Math.max(seen, status.reconnectAttempts));
        }
      },
    });
    new Gauge({
      name: 'hermes_platform_up',
      help: '1 while the platform adapter is connected.',
      labelNames: ['platform'],
      registers,
      collect() {
        this.reset();
        for (const status of sources.platforms())
          this.set({ platform: status.platform }, status.state === 'connected' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'hermes_platform_state',
      help: 'The adapter state of each platform (1 for the current state).',
      labelNames: ['platform', 'state'],
      registers,
      collect() {
        this.reset();
        // One series per state the fleet knows, 1 for the current.
        for (const status of sources.platforms())
          for (const state of PLATFORM_FLEET_STATES)
            this.set({ platform: status.platform, state }, status.state === state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'hermes_obligation_backlog',
      help: 'Replies owed by this process and not yet delivered.',
      registers,
      collect() {
        this.set(sources.obligationBacklog());
      },
    });
    new Gauge({
      name: 'hermes_inbound_journal_entries',
      help: 'Platform messages taken but not yet answered (the inbound journal).',
      registers,
      collect() {
        this.set(sources.inboundJournal());
      },
    });
    new Gauge({
      name: 'hermes_delegation_backlog',
      help: 'Async delegations: completions waiting for their session (pending) and running children.',
      labelNames: ['state'],
      registers,
      collect() {
        const backlog = sources.delegationBacklog();
        this.set({ state: 'pending' }, backlog.pending);
        this.set({ state: 'running' }, backlog.running);
      },
    });
    new Gauge({
      name: 'hermes_active_turns',
      help: 'Model turns running now.',
      registers,
      collect() {
        this.set(sources.activeTurns());
      },
    });
    new Gauge({
      name: 'hermes_event_loop_delay_seconds',
      help: 'Event-loop delay over the last one to two minutes.',
      labelNames: ['stat'],
      registers,
      collect() {
        const delay = sources.loopDelay();
        this.set({ stat: 'p99' }, delay.p99Ms / 1000);
        this.set({ stat: 'max' }, delay.maxMs / 1000);
      },
    });
    new Gauge({
      name: 'hermes_watchdog_strikes',
      help: 'Consecutive liveness probes the event loop missed (absent when the watchdog is off).',
      registers,
      collect() {
        const strikes = sources.watchdogStrikes();
        this.reset();
        if (strikes !== null) this.set(strikes);
      },
    });
  }

  /** Counts a finished turn. */
  turnFinished(kind: string, status: string): void {
    this.#turns.inc({ kind, status });
  }

  /** An observer for one turn's agent events (tool calls, model latency). */
  turnObserver(): (event: AgentEvent) => void {
    let provider = 'unknown';
    let callStarted = performance.now();
    return (event) => {
      switch (event.type) {
        case 'run.started':
          provider = event.provider || 'unknown';
          callStarted = performance.now();
          break;
        case 'message.completed':
          this.#modelLatency.observe({ provider }, (performance.now() - callStarted) / 1000);
          break;
        case 'tool.completed':
          this.#toolCalls.inc({ tool: event.name, outcome: 'ok' });
          callStarted = performance.now();
          break;
        case 'tool.failed':
          this.#toolCalls.inc({ tool: event.name, outcome: 'error' });
          callStarted = performance.now();
          break;
        default:
          break;
      }
    };
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
