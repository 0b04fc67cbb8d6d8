// Starts a control server inside a worker thread and reports the outcome to the parent.
import { parentPort, workerData } from 'node:worker_threads';
import { startControlServer } from '../control-server.js';
import { ControlSocketError } from '../errors.js';

const result = await startControlServer({ home: (workerData as { home: string }).home });
if (result.started) await result.server.close();
parentPort?.postMessage({
  started: result.started,
  code: !result.started && ControlSocketError.isInstance(result.error) ? result.error.code : null,
});
