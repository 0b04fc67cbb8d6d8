import type { WireResponse } from './client.js';
import { describeWire } from './judge.js';
import type { Allowed, WebhookCase } from './webhook-cases.js';

/** An answer as the webhook listener gives it: `{"error": …}` or `{"status": …}`. */
export interface WebhookAnswer {
  readonly status: number;
  readonly error?: string;
  readonly outcome?: string;
  readonly deliveryId?: string;
}

function describeAllowed(allowed: Allowed): string {
  const detail = allowed.error ?? allowed.outcome;
  return detail === undefined ? `${allowed.status}` : `${allowed.status} ${String(detail)}`;
}

/**
 * Everything wrong with one answer: a server error, a body that is not the listener's JSON, an
 * answer the contract does not allow. `answer` is what it said, for `remember`.
 */
export function judgeWebhookAnswer(
  fuzzCase: WebhookCase,
  response: WireResponse,
  allowed: readonly Allowed[],
): { problems: string[]; answer: WebhookAnswer } {
  const problems: string[] = [];
  const { status } = response;
  if (status >= 500) problems.push(`server error ${status}`);
  const headless = fuzzCase.request.method === 'HEAD';
  let answer: WebhookAnswer = { status };
  if (!headless) {
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      problems.push('body is not JSON');
    }
    const record = (body ?? {}) as Record<string, unknown>;
    if (status >= 400 && (typeof record.error !== 'string' || record.error === ''))
      problems.push('error body has no error message');
    answer = {
      status,
      ...(typeof record.error === 'string' ? { error: record.error } : {}),
      ...(typeof record.status === 'string' ? { outcome: record.status } : {}),
      ...(typeof record.delivery_id === 'string' ? { deliveryId: record.delivery_id } : {}),
    };
  }
  if (status === 405 && !String(response.headers.allow ?? '').includes('POST'))
    problems.push('405 without Allow: POST');
  const matches = allowed.some((option) => {
    if (option.status !== status) return false;
    if (headless) return true;
    if (option.error !== undefined) {
      if (answer.error === undefined) return false;
      return typeof option.error === 'string'
        ? answer.error === option.error
        : option.error.test(answer.error);
    }
    if (option.outcome !== undefined) return answer.outcome === option.outcome;
    return true;
  });
  if (!matches)
    problems.push(
      `the contract allows ${allowed.map(describeAllowed).join(' or ')}, not ${status} ${answer.error ?? answer.outcome ?? ''}`,
    );
  return { problems, answer };
}

/** A webhook request and its answer, short enough to read in a test report. */
export function describeWebhookExchange(
  fuzzCase: WebhookCase,
  response: WireResponse | string,
): string {
  return describeWire(
    `#${fuzzCase.index} ${fuzzCase.routeSpec.name} [${fuzzCase.mutations.join(' | ') || 'valid'}]`,
    fuzzCase.request,
    response,
    { path: 200, body: 300, answer: 300 },
  );
}
