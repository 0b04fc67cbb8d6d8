import type { AgentEvent } from '@hermes/agent';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { assistantTextDeltas } from './chat-events.js';
import { HttpError, streamedFailure } from './errors.js';

const base = { runId: 'run_1', sessionId: 's' };
const delta = (text: string): AgentEvent => ({ ...base, type: 'message.delta', text });
const completed = (toolCalls: number): AgentEvent => ({
  ...base,
  type: 'message.completed',
  messageId: 1,
  content: '',
  reasoning: '',
  finishReason: toolCalls > 0 ? 'tool_calls' : 'stop',
  toolCalls: Array.from({ length: toolCalls }, (_, index) => ({
    id: `call_${index}`,
    type: 'function' as const,
    function: { name: 'read_file', arguments: '{}' },
  })),
});

function streamed(events: readonly AgentEvent[]): string[] {
  const texts: string[] = [];
  const onEvent = assistantTextDeltas((text) => texts.push(text));
  for (const event of events) onEvent(event);
  return texts;
}

describe('assistantTextDeltas', () => {
  it('passes the text through and puts a blank line before the text of the model call after tools ran', () => {
    expect(
      streamed([
        delta('Let me '),
        delta('look.'),
        completed(1),
        { ...base, type: 'tool.started', callId: 'call_0', name: 'read_file', arguments: '{}' },
        delta('Found it.'),
        completed(0),
      ]),
    ).toEqual(['Let me ', 'look.', '\n\nFound it.']);
  });

  it('adds no separator when nothing was written before the tools ran', () => {
    expect(streamed([delta(''), completed(2), delta('Done.')])).toEqual(['', 'Done.']);
    expect(streamed([delta('One.'), completed(0), delta('Two.')])).toEqual(['One.', 'Two.']);
  });
});

describe('streamedFailure', () => {
  it('reports an HttpError as it is and anything else as a logged plain 500', () => {
    const lines: string[] = [];
    const logger = pino({ base: null }, { write: (line: string) => lines.push(line) });
    const refusal = new HttpError({ status: 409, code: 'session_busy', message: 'busy' });
    expect(streamedFailure(refusal, logger, 'stream failed')).toBe(refusal);
    expect(lines).toEqual([]);
    const failure = streamedFailure(new Error('disk on fire'), logger, 'stream failed', {
      run: 'r',
    });
    expect(failure).toMatchObject({ status: 500, code: 'internal_error' });
    expect(failure.message).toBe('Internal server error');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      msg: 'stream failed',
      run: 'r',
      err: { message: 'disk on fire' },
    });
  });
});
