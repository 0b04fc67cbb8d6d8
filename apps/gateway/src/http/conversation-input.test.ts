import type { ProfileRuntime } from '@hermes/agent';
import { describe, expect, it } from 'vitest';
import type { TurnOutcome, TurnRequest } from '../runtime/turn-runner.js';
import {
  contentText,
  hasPromptText,
  NEW_CONVERSATION_ID_DRAWS,
  runNewConversationTurn,
} from './conversation-input.js';
import { HttpError } from './errors.js';

const taken = () =>
  new HttpError({ status: 409, code: 'session_exists', message: 'session exists' });

function turnsTaking(takenIds: readonly string[]) {
  const tried: string[] = [];
  const runTurn = async (request: TurnRequest): Promise<TurnOutcome> => {
    tried.push(request.sessionId);
    if (takenIds.includes(request.sessionId)) throw taken();
    return { result: { sessionId: request.sessionId } } as TurnOutcome;
  };
  return { tried, runTurn };
}

const request = {
  runtime: {} as ProfileRuntime,
  message: 'hi',
  kind: 'api' as const,
  newSession: { source: 'api_server' },
};

describe('runNewConversationTurn', () => {
  it('draws another id when the one drawn is taken, and runs the turn on it', async () => {
    const ids = ['api_1_aaaaaaaa', 'api_1_bbbbbbbb'];
    const { tried, runTurn } = turnsTaking(['api_1_aaaaaaaa']);
    const outcome = await runNewConversationTurn(runTurn, request, () => ids.shift() ?? 'none');
    expect(tried).toEqual(['api_1_aaaaaaaa', 'api_1_bbbbbbbb']);
    expect(outcome.result.sessionId).toBe('api_1_bbbbbbbb');
  });

  it(`gives up with session_exists after ${NEW_CONVERSATION_ID_DRAWS} taken ids`, async () => {
    const { tried, runTurn } = turnsTaking(['same']);
    await expect(runNewConversationTurn(runTurn, request, () => 'same')).rejects.toMatchObject({
      code: 'session_exists',
    });
    expect(tried).toHaveLength(NEW_CONVERSATION_ID_DRAWS);
  });

  it('does not run a turn again for any other failure', async () => {
    let runs = 0;
    const failing = async (): Promise<TurnOutcome> => {
      runs += 1;
      throw new HttpError({ status: 409, code: 'session_busy', message: 'busy' });
    };
    await expect(runNewConversationTurn(failing, request)).rejects.toMatchObject({
      code: 'session_busy',
    });
    expect(runs).toBe(1);
  });
});

describe('hasPromptText', () => {
  const image = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };

  it('finds no prompt in an image alone, though contentText shows a marker for it', () => {
    expect(contentText([image])).toBe('[image_url]');
    expect(hasPromptText([image])).toBe(false);
    expect(hasPromptText([image, { type: 'text', text: ' \n ' }])).toBe(false);
    expect(hasPromptText([{ type: 'input_image' }])).toBe(false);
    expect(hasPromptText('   ')).toBe(false);
    expect(hasPromptText(null)).toBe(false);
    expect(hasPromptText(undefined)).toBe(false);
  });

  it('finds the prompt in a string or in any text part beside an image', () => {
    expect(hasPromptText('hi')).toBe(true);
    expect(hasPromptText([image, { type: 'text', text: 'what is this?' }])).toBe(true);
    expect(hasPromptText([{ type: 'input_text', text: 'hi' }])).toBe(true);
  });
});
