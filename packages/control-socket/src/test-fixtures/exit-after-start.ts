// A stand-in gateway that exits early: claims the PID file of the home in argv[2], starts the
// control server, prints what it holds, and calls process.exit(0) on SIGUSR2 without closing
// anything itself, as an early-exit path in the gateway would.
import { startControlServer } from '../control-server.js';
import { claimPidFile } from '../pid-file.js';

const home = process.argv[2];
if (!home) throw new Error('usage: exit-after-start <home>');
const claim = await claimPidFile({ home });
const control = await startControlServer({ home });
process.on('SIGUSR2', () => process.exit(0));
console.log(
  `holding=${JSON.stringify({
    claimed: claim.claimed,
    bindPath: control.started ? control.server.bindPath : null,
    pointerFile: control.started ? control.server.pointerFile : null,
  })}`,
);
setInterval(() => {}, 60_000);
