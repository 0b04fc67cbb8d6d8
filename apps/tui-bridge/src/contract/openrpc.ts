import { toJsonSchema } from '@valibot/to-json-schema';
import { PROTOCOL_VERSION } from './envelope.js';
import { RPC_ERROR_CODES } from './error-codes.js';
import { EVENTS } from './events.js';
import { METHODS } from './methods.js';

type JsonSchema = ReturnType<typeof toJsonSchema>;

function schemaOf(schema: Parameters<typeof toJsonSchema>[0]): JsonSchema {
  const converted = toJsonSchema(schema, { errorMode: 'throw' }) as Record<string, unknown>;
  const { $schema: _ignored, ...rest } = converted;
  return rest as JsonSchema;
}

/**
 * The OpenRPC document of the bridge, generated from the contract's valibot schemas. Methods take
 * params by name (one object). Events are listed under `x-events` (OpenRPC has no notification
 * section): each one's payload, carried as `{ method: 'event', params: { type, session_id, payload } }`.
 * Committed as `openrpc.schema.json`; a test fails when the two differ.
 */
export function buildOpenRpcDocument(version: string): Record<string, unknown> {
  return {
    openrpc: '1.3.2',
    info: {
      title: 'Hermes TUI bridge',
      version,
      description: `JSON-RPC 2.0 for terminal and desktop front ends, newline-delimited over stdio or one message per WebSocket frame. Protocol version ${PROTOCOL_VERSION}.`,
    },
    methods: Object.entries(METHODS).map(([name, method]) => {
      const params = schemaOf(method.params) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      const required = new Set(params.required ?? []);
      return {
        name,
        summary: method.summary,
        paramStructure: 'by-name',
        params: Object.entries(params.properties ?? {}).map(([param, schema]) => ({
          name: param,
          required: required.has(param),
          schema,
        })),
        result: { name: `${name}.result`, schema: schemaOf(method.result) },
      };
    }),
    components: {
      errors: Object.fromEntries(
        Object.entries(RPC_ERROR_CODES).map(([name, code]) => [name, { code, message: name }]),
      ),
    },
    'x-events': Object.fromEntries(
      Object.entries(EVENTS).map(([type, event]) => [
        type,
        { summary: event.summary, payload: schemaOf(event.payload) },
      ]),
    ),
  };
}
