// The body of the stand-in gateways `hermes-gateway` and `hermes` next to this file. Run as
// `node …/hermes-gateway` or `node …/hermes gateway run`, their command lines look like a real
// gateway's, so other processes judge them as they would judge the gateway. With
// HERMES_FIXTURE_CLAIM=1 it claims the PID file of HERMES_HOME first; either way it prints
// `ready claim=<outcome or null>` and stays alive until it is killed.
import { claimPidFile } from '../pid-file.js';

let outcome: { claimed: boolean; reason: string | null } | null = null;
if (process.env.HERMES_FIXTURE_CLAIM === '1') {
  const result = await claimPidFile();
  outcome = { claimed: result.claimed, reason: result.claimed ? null : result.reason };
}
console.log(`ready claim=${JSON.stringify(outcome)}`);
setInterval(() => {}, 60_000);
