import type { RecordedRequest, ScriptedTurn } from '@hermes/testkit';

/** Replies `echo: <last user message>`, `count` times. */
export function echoScript(count: number): ScriptedTurn[] {
  return Array.from({ length: count }, () => (request: RecordedRequest) => {
    const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
    const last = messages.filter((message) => message.role === 'user').at(-1)?.content;
    return { text: `echo: ${typeof last === 'string' ? last : JSON.stringify(last)}` };
  });
}
