import { toJsonSchemaDefs } from '@valibot/to-json-schema';
import { CONTROL_PROTOCOL_VERSION } from './constants.js';
import {
  ControlErrorReplySchema,
  ControlReplySchema,
  ControlRequestSchema,
  ControlSuccessReplySchema,
  IdentifyResultSchema,
  StatusResultSchema,
} from './wire-schema.js';

/** Where the generated file lives, relative to the package root. */
export const JSON_SCHEMA_FILE = `schema/control-socket.v${CONTROL_PROTOCOL_VERSION}.schema.json`;

/**
 * The JSON Schema of wire protocol v1, generated from the valibot schemas so that clients in
 * other languages validate exactly what this package validates. Kept private: it needs
 * `@valibot/to-json-schema`, a development dependency; the published artefact is the file.
 */
export function buildControlSocketJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://github.com/hermes-ts/hermes-ts/blob/main/packages/control-socket/${JSON_SCHEMA_FILE}`,
    title: `Hermes gateway control socket, protocol v${CONTROL_PROTOCOL_VERSION}`,
    description:
      'One JSON request line (ControlRequest, at most 64 KiB) in, one JSON reply line (ControlReply, at most 512 KiB) out, then the server closes. `identify` answers an IdentifyResult and `status` a StatusResult as the reply `result`.',
    // toJsonSchemaDefs links definitions with `#/$defs/<name>` references.
    $defs: toJsonSchemaDefs(
      {
        ControlRequest: ControlRequestSchema,
        ControlSuccessReply: ControlSuccessReplySchema,
        ControlErrorReply: ControlErrorReplySchema,
        ControlReply: ControlReplySchema,
        IdentifyResult: IdentifyResultSchema,
        StatusResult: StatusResultSchema,
      },
      { target: 'draft-2020-12' },
    ),
  };
}

/** The file's exact text: two-space indented JSON and a final newline. */
export function renderControlSocketJsonSchema(): string {
  return `${JSON.stringify(buildControlSocketJsonSchema(), null, 2)}\n`;
}
