import { packageTestConfig } from '../../vitest.shared.ts';

// The heartbeat-flood test measures how fast another controller is answered (bound: 100 ms); it
// runs in the `test:timing` stage, alone on the machine (see vitest.shared.ts).
export default packageTestConfig({ timing: ['src/transport/heartbeat-flood.test.ts'] });
