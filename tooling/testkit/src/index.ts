export {
  type ModelServer,
  type ModelServerOptions,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptedUsage,
  startModelServer,
} from './model-server.js';
export * from './readme/index.js';
export { seededRandom } from './seeded-random.js';
export {
  isProcessRunning,
  type ProcessExit,
  type SpawnedProcess,
  type SpawnProcessOptions,
  spawnProcess,
} from './spawn-process.js';
export { type TempHome, tempHome } from './temp-home.js';
export { type TestReadmeExamplesOptions, testReadmeExamples } from './test-readme-examples.js';
