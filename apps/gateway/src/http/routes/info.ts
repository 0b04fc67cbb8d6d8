import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_WS_PATH,
  bearerMatches,
  browserExtensionControlFeature,
  DEFAULT_ARTIFACT_TRANSPORT,
  readFlags,
} from '@hermes/browser-broker';
import type { Hono } from 'hono';
import { profileApiKey } from '../../runtime/profiles.js';
import { HttpError } from '../errors.js';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';

/** The model id clients see: the agent itself, named after the profile when one is addressed. */
export const HERMES_MODEL_NAME = 'hermes-agent';

export function modelNameFor(profile: string, prefixed: boolean): string {
  return prefixed ? profile : HERMES_MODEL_NAME;
}

interface SkillInfo {
  name: string;
  category: string | null;
  description: string | null;
  path: string;
}

const SKILL_FILE = 'SKILL.md';

function frontMatterDescription(text: string): string | null {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  const line = match?.[1]?.split(/\r?\n/).find((entry) => /^description\s*:/.test(entry));
  const value = line?.replace(/^description\s*:\s*/, '').trim();
  return value ? value.replace(/^["']|["']$/g, '') : null;
}

async function isFile(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined))?.isFile() === true;
}

/** Skills under `<home>/skills`, one category level deep, as `skill_view` finds them. */
async function listSkills(home: string): Promise<SkillInfo[]> {
  const root = path.join(home, 'skills');
  const found: SkillInfo[] = [];
  const add = async (directory: string, name: string, category: string | null) => {
    const file = path.join(directory, SKILL_FILE);
    const head = await readFile(file, 'utf8')
      .then((text) => text.slice(0, 4096))
      .catch(() => '');
    found.push({ name, category, description: frontMatterDescription(head), path: directory });
  };
  for (const entry of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const directory = path.join(root, entry.name);
    if (await isFile(path.join(directory, SKILL_FILE))) {
      await add(directory, entry.name, null);
      continue;
    }
    for (const child of await readdir(directory, { withFileTypes: true }).catch(() => [])) {
      if (!child.isDirectory() || child.name.startsWith('.')) continue;
      const nested = path.join(directory, child.name);
      if (await isFile(path.join(nested, SKILL_FILE))) await add(nested, child.name, entry.name);
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

export function registerInfoRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.get('/v1/models', (context) => {
    const runtime = context.get('runtime');
    const id = modelNameFor(runtime.name, context.get('prefix') !== '');
    return context.json({
      object: 'list',
      data: [
        { id, object: 'model', created: Math.floor(deps.startedAt / 1000), owned_by: 'hermes' },
      ],
    });
  });

  app.get('/v1/capabilities', (context) => {
    const runtime = context.get('runtime');
    // Feature discovery is open on loopback without a key, bearer-checked whenever one is set.
    const expected = profileApiKey(runtime);
    if (expected) {
      if (!bearerMatches(context.req.header('authorization'), expected)) {
        throw new HttpError({
          status: 401,
          code: 'invalid_api_key',
          message: 'Invalid or missing API key (Authorization: Bearer <API_SERVER_KEY>)',
        });
      }
    }
    const feature = browserExtensionControlFeature({
      flags: { ...readFlags(deps.flags), developerMode: deps.broker.developerModeEnabled() },
      artifactTransport: DEFAULT_ARTIFACT_TRANSPORT,
    });
    return context.json({
      object: 'hermes.capabilities',
      platform: 'api_server',
      version: deps.version,
      profile: runtime.name,
      model: modelNameFor(runtime.name, context.get('prefix') !== ''),
      features: {
        browser_extension_control: feature,
        sessions_api: true,
        chat_completions: { streaming: true, session_headers: true },
        responses: { store: true, previous_response_id: true },
        runs: true,
        slash_commands: true,
        review: deps.slash.reviewAvailable,
        profiles: { multiplex: deps.registry.serve === 'multiplex', prefix: '/p/{profile}' },
      },
      endpoints: {
        chat_completions: { method: 'POST', path: '/v1/chat/completions' },
        responses: { method: 'POST', path: '/v1/responses' },
        runs: { method: 'POST', path: '/v1/runs' },
        sessions: { method: 'GET', path: '/api/sessions' },
        session_chat: { method: 'POST', path: '/api/sessions/{id}/chat' },
        session_chat_stream: { method: 'POST', path: '/api/sessions/{id}/chat/stream' },
        browser_control_register: { method: 'POST', path: BROWSER_CONTROL_REGISTER_PATH },
        browser_control_ws: { method: 'GET', path: BROWSER_CONTROL_WS_PATH },
        artifact_upload: { method: 'POST', path: DEFAULT_ARTIFACT_TRANSPORT.uploadPath },
        artifact_download: { method: 'GET', path: DEFAULT_ARTIFACT_TRANSPORT.downloadPath },
      },
    });
  });

  app.get('/v1/skills', async (context) => {
    const skills = await listSkills(context.get('runtime').home);
    return context.json({
      object: 'list',
      data: skills.map((skill) => ({
        name: skill.name,
        category: skill.category,
        description: skill.description,
      })),
    });
  });

  app.get('/v1/toolsets', async (context) => {
    const runtime = context.get('runtime');
    let toolsets: ReturnType<Awaited<ReturnType<typeof runtime.agent>>['listToolsets']>;
    try {
      toolsets = (await runtime.agent()).listToolsets();
    } catch (error) {
      deps.logger.warn({ err: error, profile: runtime.name }, 'toolset enumeration failed');
      throw new HttpError({
        status: 500,
        code: 'toolsets_unavailable',
        message: 'Failed to enumerate toolsets',
      });
    }
    return context.json({
      object: 'list',
      platform: 'api_server',
      data: toolsets.map((toolset) => ({
        name: toolset.name,
        label: toolset.label,
        description: toolset.description,
        enabled: toolset.enabled,
        configured: toolset.configured,
        available: toolset.available,
        reason_code: toolset.reasonCode,
        tools: [...toolset.tools].sort(),
      })),
    });
  });
}
