import type { Readable, Writable } from 'node:stream';
import type { Bridge } from '../bridge.js';
import { MAX_MESSAGE_BYTES } from '../contract/envelope.js';
import type { Connection } from '../rpc/connection.js';
import { LineSplitter } from '../rpc/line-splitter.js';

export interface StdioServeOptions {
  readonly bridge: Bridge;
  readonly input: Readable;
  readonly output: Writable;
  readonly maxLineBytes?: number;
}

/**
 * Serves one front end over a byte stream pair: one JSON-RPC message per line in, one per line
 * out. `ended` resolves when the input ends (the front end went away or closed its end), or once
 * `detach()` stopped reading it (the bridge is being stopped; the input is paused, so an open
 * stdin no longer keeps the process alive). The connection stays open for output: requests still
 * in flight answer, and the events of turns that drain reach the front end while it reads. The
 * bridge closes it when it closes (or when the output fails).
 */
export function serveStdio(options: StdioServeOptions): {
  connection: Connection;
  ended: Promise<void>;
  detach(): void;
} {
  const { bridge, input, output } = options;
  const maxBytes = options.maxLineBytes ?? MAX_MESSAGE_BYTES;
  let writable = true;
  output.on('error', () => {
    // The front end closed its reading end: stop writing, keep the turns going.
    writable = false;
    connection.close();
  });
  const connection = bridge.connect('stdio', (text) => {
    if (writable) output.write(`${text}\n`);
  });
  const splitter = new LineSplitter({
    maxBytes,
    onLine: (line) => void connection.receive(line),
    onOverflow: () => connection.rejectOversized(maxBytes),
  });
  let detach = () => {};
  const ended = new Promise<void>((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      input.off('data', onData);
      splitter.end();
      resolve();
    };
    const onData = (chunk: Buffer | string) =>
      splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    input.on('data', onData);
    input.once('end', finish);
    input.once('close', finish);
    input.once('error', finish);
    detach = () => {
      finish();
      input.pause();
    };
  });
  bridge.announce(connection);
  return { connection, ended, detach: () => detach() };
}
