// The scripted model server of `turn.bench.ts`, in its own process so the agent under test never
// shares an event loop with it. Answers every call at once with text. Prints its base URL, and
// the URL of a side route that answers the body of the last model request (so the bench can
// replay exactly what the agent sent).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startModelServer } from '@hermes/testkit';

let last: unknown = null;
const reply = { text: 'ok', usage: { promptTokens: 10, completionTokens: 1 } };
const server = await startModelServer({
  script: Array.from({ length: 200_000 }, () => (request: { body: unknown }) => {
    last = request.body;
    return reply;
  }),
});
const side = createServer((_request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify(last));
});
await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
const { port } = side.address() as AddressInfo;
process.stdout.write(`MODEL ${server.baseUrl} LAST http://127.0.0.1:${port}/\n`);
process.on('SIGTERM', () => {
  side.close();
  void server.close().then(() => process.exit(0));
});
