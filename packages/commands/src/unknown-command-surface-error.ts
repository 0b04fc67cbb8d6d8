import { CommandsError } from './commands-error.js';

/** A surface name other than `cli`, `desktop` or `gateway`. */
export class UnknownCommandSurfaceError extends CommandsError {
  readonly surface: string;

  constructor(surface: string) {
    super({ code: 'unknown_command_surface', message: `Unknown command surface: ${surface}` });
    this.surface = surface;
  }
}
