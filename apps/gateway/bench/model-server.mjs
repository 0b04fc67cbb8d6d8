// A scripted OpenAI-compatible model server answering every call at once (its own process, so
// the load generator never shares an event loop with it). Prints its base URL.
import { startModelServer } from '@hermes/testkit';

const reply = { text: 'ok', usage: { promptTokens: 10, completionTokens: 1 } };
const server = await startModelServer({ script: Array.from({ length: 500_000 }, () => reply) });
process.stdout.write(`MODEL ${server.baseUrl}\n`);
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
