// The baseline: a bare @hono/node-server route answering a fixed JSON body (the gateway's own
// session listing, captured once), with no store, auth or profile resolution. Prints its URL.
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const body = readFileSync(process.argv[2], 'utf8');
const app = new Hono();
app.get('/api/sessions', (context) =>
  context.body(body, 200, { 'content-type': 'application/json' }),
);
// One HTTP round trip with a body and nothing behind it: the floor of any proxied call.
app.post('/v1/chat/completions', async (context) => {
  await context.req.text();
  return context.json({ object: 'chat.completion', choices: [] });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`BARE http://127.0.0.1:${info.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
