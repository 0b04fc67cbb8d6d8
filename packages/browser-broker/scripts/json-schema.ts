import { toJsonSchemaDefs } from '@valibot/to-json-schema';
import { BROWSER_CONTROL_FRAME_SCHEMAS } from '../src/protocol.js';

export const JSON_SCHEMA_FILE = new URL(
  '../schema/browser-control.v1.schema.json',
  import.meta.url,
);

/** The checked-in JSON Schema of protocol v1, generated from the valibot frame schemas. */
export function buildBrowserControlJsonSchema(): Record<string, unknown> {
  const definitions = toJsonSchemaDefs(BROWSER_CONTROL_FRAME_SCHEMAS, { errorMode: 'throw' });
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://hermes-ts.dev/schema/browser-control.v1.schema.json',
    title: 'Hermes browser-control protocol v1 frames',
    definitions,
    oneOf: Object.keys(definitions)
      .filter((name) => name !== 'registerResponse')
      .map((name) => ({ $ref: `#/definitions/${name}` })),
  };
}

export function renderBrowserControlJsonSchema(): string {
  return `${JSON.stringify(buildBrowserControlJsonSchema(), null, 2)}\n`;
}
