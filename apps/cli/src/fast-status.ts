// `hermes gateway status` without the command tree: scripts and status bars poll it, so it loads
// only the control-socket client (bundled on its own, see tsup.config.ts). The command itself is
// `commands/gateway/status.ts`, the same one `main.ts` runs.
import { gatewayStatus } from './commands/gateway/status.js';
import type { CommandContext } from './context.js';
import { createOutput } from './output/output.js';
import { reportError } from './report-error.js';

export async function runGatewayStatus(options: {
  json: boolean;
  debug: boolean;
  version: string;
  homeNamed: boolean;
}): Promise<number> {
  const output = createOutput({ json: options.json });
  const context: CommandContext = {
    output,
    debug: options.debug,
    version: options.version,
    home: process.env.HERMES_HOME ?? '',
    homeNamed: options.homeNamed,
  };
  try {
    return await gatewayStatus(context);
  } catch (error) {
    return reportError(error, { output, debug: options.debug });
  }
}
