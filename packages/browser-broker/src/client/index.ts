export {
  BrowserControllerClient,
  type BrowserControllerClientOptions,
  type CommandContext,
  type CommandHandler,
  ControllerConnectFailed,
} from './controller-client.js';
