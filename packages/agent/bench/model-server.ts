// A scripted model server in its own process, so the agent under test never shares an event loop
// with it (as a real provider). Answers every call at once. Prints its base URL and the URL of a
// side route answering the bodies of the last `n` model requests (default 1) as a JSON array, so
// a bench can replay exactly what the agent sent.
//   model-server.ts text       every reply is text
//   model-server.ts tools      every reply calls the `noop` tool
//   model-server.ts loop <k>   k replies call `noop`, then one is text, and again
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startModelServer } from '@hermes/testkit';

const [mode = 'text', every = '10'] = process.argv.slice(2);
const usage = { promptTokens: 10, completionTokens: 1 };
const text = { text: 'ok', usage };
const call = { toolCalls: [{ name: 'noop', arguments: {} }], usage };
const kept: unknown[] = [];
let step = 0;
const reply = (request: { body: unknown }) => {
  kept.push(request.body);
  if (kept.length > 64) kept.shift();
  step += 1;
  if (mode === 'tools') return call;
  if (mode === 'loop') return step % (Number(every) + 1) === 0 ? text : call;
  return text;
};
const server = await startModelServer({ script: Array.from({ length: 200_000 }, () => reply) });
const side = createServer((request, response) => {
  const count = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('n') ?? 1);
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify(kept.slice(-count)));
});
await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
const { port } = side.address() as AddressInfo;
process.stdout.write(`MODEL ${server.baseUrl} LAST http://127.0.0.1:${port}/\n`);
process.on('SIGTERM', () => {
  side.close();
  void server.close().then(() => process.exit(0));
});
