import { testReadmeExamples } from '@hermes/testkit';

testReadmeExamples({ packageRoot: new URL('..', import.meta.url) });
