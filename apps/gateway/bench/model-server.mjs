// A scripted OpenAI-compatible model server answering every call at once (its own process, so
// the load generator never shares an event loop with it). Prints its base URL, and the URL of a
// control route answering the body of the last model request (`GET <control>/last-body`): the
// bench replays exactly what the gateway sent, as a direct call.
import http from 'node:http';
import { startModelServer } from '@hermes/testkit';

const reply = { text: 'ok', usage: { promptTokens: 10, completionTokens: 1 } };
const server = await startModelServer({ script: Array.from({ length: 500_000 }, () => reply) });
const control = http.createServer((_request, response) => {
  const last = server.modelRequests.at(-1);
  response.writeHead(last ? 200 : 404, { 'content-type': 'application/json' });
  response.end(JSON.stringify(last?.body ?? null));
});
await new Promise((resolve) => control.listen(0, '127.0.0.1', resolve));
process.stdout.write(
  `MODEL ${server.baseUrl} CONTROL http://127.0.0.1:${control.address().port}\n`,
);
process.on('SIGTERM', () => {
  control.close();
  server.close().then(() => process.exit(0));
});
