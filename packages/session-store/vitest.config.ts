import { packageTestConfig } from '../../vitest.shared.ts';

// The contended-writes test measures event-loop gaps (bound: 50 ms held by our code) while another
// process holds the write lock for 5 s; it runs in the `test:timing` stage, alone on the machine
// (see vitest.shared.ts).
export default packageTestConfig({ timing: ['test/contended-writes.test.ts'] });
