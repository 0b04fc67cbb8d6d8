import type { CommandContext, Positional } from '../context.js';
import { listArg } from '../context.js';

/**
 * `hermes tui-bridge [options]`: the TUI bridge of `@hermes/tui-bridge` in this process, on the
 * profile `-p` chose — stdin/stdout carry the protocol, so nothing else is printed there. The
 * bridge's own command line parses the options and says how it ended (its exit code is ours).
 */
export async function tuiBridgeCommand(context: CommandContext, args: Positional): Promise<number> {
  const { runBridgeCli } = await import('@hermes/tui-bridge');
  return runBridgeCli(listArg(args, 0), { name: 'hermes tui-bridge', home: context.home });
}
