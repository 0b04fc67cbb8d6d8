// A stand-in gateway process for tests: claims the PID file of the home in argv[2], prints the
// outcome, and stays alive (holding the claim) until it is killed.
import { claimPidFile } from '../pid-file.js';

const home = process.argv[2];
if (!home) throw new Error('usage: claim-gateway <home>');
const result = await claimPidFile({ home });
console.log(
  `claim=${JSON.stringify({ claimed: result.claimed, reason: result.claimed ? null : result.reason })}`,
);
setInterval(() => {}, 60_000);
