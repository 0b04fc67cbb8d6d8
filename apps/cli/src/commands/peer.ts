import { readFileSync } from 'node:fs';
import {
  applyEnvFile,
  getActiveProfileName,
  getSecret,
  readConfigData,
  readConfigDocument,
  readEnvFile,
  setConfigValue,
  setEnvValue,
  setEnvValues,
  writeConfigDocument,
} from '@hermes/config';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { textArg } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { withProgress } from '../output/progress.js';
import { PeerError, parsePeerTarget, peerBaseUrl, sendPeerDm } from '../peer/peer-client.js';

/** Peer names: a lowercase slug of at most 64 characters. */
const PEER_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** A name as it appears in a key variable: upper case, `-` as `_` (so `a-b` and `a_b` meet). */
function keyPart(value: string): string {
  return value.toUpperCase().replace(/-/g, '_');
}

/** `HERMES_PEER_<NAME>_KEY`, or `HERMES_PEER_<NAME>__<PROFILE>_KEY` for one of its profiles. */
export function peerKeyName(peer: string, profile?: string): string {
  return profile && profile !== 'default'
    ? `HERMES_PEER_${keyPart(peer)}__${keyPart(profile)}_KEY`
    : `HERMES_PEER_${keyPart(peer)}_KEY`;
}

/**
 * Why peer `name` cannot get a key of its own next to peer `other`, or undefined when it can.
 * Two peers share key variables when their names differ only in `-` against `_`, or when one
 * name is the other's plus `__<profile>` (`a__b`'s key is the one `peer dm a/b` sends to `a`).
 * A profile name starts with a letter or digit, so no other pair of names can meet.
 */
function keyConflict(name: string, other: string): string | undefined {
  if (other === name) return undefined;
  const mine = keyPart(name);
  const theirs = keyPart(other);
  if (mine === theirs) return `peer '${other}' already uses ${peerKeyName(name)}`;
  const profileOf = (longer: string, shorter: string) =>
    longer.startsWith(`${shorter}__`) && /^[A-Z0-9]/.test(longer.slice(shorter.length + 2))
      ? longer.slice(shorter.length + 2).toLowerCase()
      : undefined;
  const asTheirProfile = profileOf(mine, theirs);
  if (asTheirProfile !== undefined) {
    return `peer '${other}' uses ${peerKeyName(name)} for its profile ${asTheirProfile} (hermes peer dm ${other}/${asTheirProfile})`;
  }
  if (profileOf(theirs, mine) !== undefined) {
    return `peer '${other}' already uses ${peerKeyName(other)}, the key of ${name}'s profile ${profileOf(theirs, mine)}`;
  }
  return undefined;
}

interface PeerEntry {
  readonly name: string;
  readonly url: string;
}

function readPeers(home: string): PeerEntry[] {
  const section = readConfigData(home).bot_peers;
  if (!section || typeof section !== 'object' || Array.isArray(section)) return [];
  const peers: PeerEntry[] = [];
  for (const [name, value] of Object.entries(section as Record<string, unknown>)) {
    const url =
      typeof value === 'string'
        ? value
        : value && typeof value === 'object'
          ? (value as { url?: unknown }).url
          : undefined;
    if (typeof url === 'string') peers.push({ name, url });
  }
  return peers.sort((a, b) => a.name.localeCompare(b.name));
}

function validateUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usageError(`"${raw}" is not a URL`, "Give the peer's API server, e.g. http://host:8642");
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(`a peer URL must be http:// or https://, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw usageError(
      'a peer URL must not carry credentials',
      'Pass the key with --key or --key-stdin',
    );
  }
  if (url.search || url.hash) throw usageError('a peer URL must not have a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

function validateName(raw: string): string {
  const name = raw.trim().toLowerCase();
  if (!PEER_NAME.test(name)) {
    throw usageError(
      `invalid peer name "${raw}"`,
      'Use 1-64 characters from a-z, 0-9, "-" and "_"',
    );
  }
  return name;
}

export async function peerAdd(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const name = validateName(textArg(args, 0));
  const url = validateUrl(textArg(args, 1));
  let key = typeof options.key === 'string' ? options.key : undefined;
  if (options.keyStdin === true) key = readFileSync(0, 'utf8').trim();
  if (key !== undefined && key.trim() === '') throw usageError('the key is empty');
  for (const other of readPeers(context.home)) {
    const conflict = keyConflict(name, other.name);
    if (conflict !== undefined) {
      throw new CliError({
        code: 'peer_key_conflict',
        message: `cannot add peer '${name}': ${conflict}`,
        hint: `Choose another name, or remove the other peer first: hermes peer remove ${other.name}`,
      });
    }
  }
  setConfigValue(`bot_peers.${name}`, { url }, context.home);
  const keyName = peerKeyName(name);
  if (key !== undefined) setEnvValue(keyName, key.trim(), context.home);
  const hasKey =
    key !== undefined || readEnvFile(context.home)[keyName] !== undefined || !!process.env[keyName];
  const { output } = context;
  if (output.json) {
    output.printJson({ peer: name, url, key_env: keyName, key_set: hasKey });
    return EXIT.ok;
  }
  output.line(`Added peer ${output.styles.bold(name)} (${url}).`);
  if (!hasKey) output.warn(`no key yet: set ${keyName} (hermes config set ${keyName} <key>)`);
  return EXIT.ok;
}

export async function peerList(context: CommandContext): Promise<number> {
  const env = readEnvFile(context.home);
  const peers = readPeers(context.home).map((peer) => {
    const keyName = peerKeyName(peer.name);
    return {
      ...peer,
      key_env: keyName,
      key_set: env[keyName] !== undefined || !!process.env[keyName],
    };
  });
  const { output } = context;
  if (output.json) {
    output.printJson({ peers });
    return EXIT.ok;
  }
  if (peers.length === 0) {
    output.note('No peers yet. Add one with: hermes peer add <name> <url> --key <key>');
    return EXIT.ok;
  }
  const styles = output.styles;
  output.table(
    [
      {
        header: 'PEER',
        value: (row: (typeof peers)[number]) => row.name,
        style: (text) => styles.bold(text),
      },
      { header: 'URL', value: (row) => row.url, flexible: true },
      {
        header: 'KEY',
        value: (row) => (row.key_set ? row.key_env : `missing (${row.key_env})`),
        style: (text, row) => (row.key_set ? text : styles.yellow(text)),
      },
    ],
    peers,
  );
  return EXIT.ok;
}

function unknownPeer(name: string): CliError {
  return new CliError({
    code: 'unknown_peer',
    message: `No peer named '${name}'. Run: hermes peer list`,
  });
}

/** Whether peer `peer` reads `variable`: its own key, or the key of one of its profiles. */
function peerReads(peer: string, variable: string): boolean {
  if (variable === peerKeyName(peer)) return true;
  const profilePrefix = `HERMES_PEER_${keyPart(peer)}__`;
  return (
    variable.startsWith(profilePrefix) &&
    /^[A-Z0-9][A-Z0-9_]*_KEY$/.test(variable.slice(profilePrefix.length))
  );
}

export async function peerRemove(context: CommandContext, args: Positional): Promise<number> {
  const name = textArg(args, 0).trim().toLowerCase();
  if (!readPeers(context.home).some((peer) => peer.name === name)) throw unknownPeer(name);
  const { document } = readConfigDocument(context.home);
  document.deleteIn(['bot_peers', name]);
  writeConfigDocument(document, context.home);
  // Its own key and every profile key (`HERMES_PEER_<NAME>__<PROFILE>_KEY`) go, in one write.
  // A config written before names were checked for clashes can hold two peers that read one
  // variable (`a-b` and `a_b`; `a__b`'s key is `a/b`'s): it stays while another peer reads it.
  const others = readPeers(context.home);
  const removedKeys: string[] = [];
  for (const variable of Object.keys(readEnvFile(context.home)).sort()) {
    if (!peerReads(name, variable)) continue;
    const sharer = others.find((peer) => peerReads(peer.name, variable));
    if (sharer) context.output.warn(`kept ${variable}: peer '${sharer.name}' still uses it`);
    else removedKeys.push(variable);
  }
  setEnvValues(
    Object.fromEntries(removedKeys.map((variable) => [variable, undefined])),
    context.home,
  );
  if (context.output.json) {
    context.output.printJson({ peer: name, removed: true, removed_keys: removedKeys });
  } else {
    context.output.line(
      `Removed peer ${name}${removedKeys.length > 0 ? ` and ${removedKeys.join(', ')} from .env` : ''}.`,
    );
  }
  return EXIT.ok;
}

export async function peerDm(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const targetText = textArg(args, 0);
  const message = textArg(args, 1);
  const parsed = parsePeerTarget(targetText);
  if (
    !parsed ||
    !PEER_NAME.test(parsed.peer) ||
    (parsed.profile !== undefined && !PROFILE_NAME.test(parsed.profile))
  ) {
    throw usageError(`invalid target "${targetText}"`, 'Use <peer> or <peer>/<profile>');
  }
  if (message.trim() === '') throw usageError('the message is empty');
  const peer = readPeers(context.home).find((entry) => entry.name === parsed.peer);
  if (!peer) throw unknownPeer(parsed.peer);
  applyEnvFile(context.home);
  const profileKey = parsed.profile ? peerKeyName(parsed.peer, parsed.profile) : undefined;
  // In a config written before names were checked for clashes, `a/b`'s key can be peer `a__b`'s:
  // never send one peer's key to another.
  const owner =
    profileKey && readPeers(context.home).find((entry) => peerKeyName(entry.name) === profileKey);
  if (owner) {
    throw new CliError({
      code: 'peer_key_conflict',
      message: `${profileKey} is the key of peer '${owner.name}', not of ${targetText}`,
      hint: `Rename one of them: hermes peer remove ${owner.name}, then add it under another name`,
    });
  }
  const key =
    (profileKey ? getSecret(profileKey) : undefined) ?? getSecret(peerKeyName(parsed.peer));
  if (!key) {
    throw new CliError({
      code: 'missing_peer_key',
      message: `No API key for peer '${parsed.peer}'${parsed.profile ? ` (profile ${parsed.profile})` : ''}`,
      hint: `Set ${profileKey ?? peerKeyName(parsed.peer)}: hermes config set ${profileKey ?? peerKeyName(parsed.peer)} <key>`,
    });
  }
  const author =
    typeof options.author === 'string'
      ? options.author
      : process.env.HERMES_PEER_AUTHOR?.trim() || undefined;
  const dmTimeout = typeof options.timeout === 'number' ? options.timeout : undefined;
  const { output } = context;
  let result: Awaited<ReturnType<typeof sendPeerDm>>;
  try {
    result = await withProgress(output, `Waiting for ${targetText}`, () =>
      sendPeerDm({
        target: { name: parsed.peer, baseUrl: peerBaseUrl(peer.url, parsed.profile), key },
        message,
        author,
        senderProfile: getActiveProfileName(context.home),
        ...(dmTimeout !== undefined
          ? {
              timeoutsS: {
                dm: dmTimeout,
                accept: Math.min(30, dmTimeout),
                list: Math.min(30, dmTimeout),
              },
            }
          : {}),
      }),
    );
  } catch (error) {
    if (error instanceof PeerError) {
      throw new CliError({
        code: `peer_${error.kind}`,
        message: error.message,
        exitCode: error.kind === 'timeout' ? EXIT.timeout : EXIT.failure,
      });
    }
    throw error;
  }
  if (output.json) {
    output.printJson({
      peer: parsed.peer,
      profile: parsed.profile ?? null,
      session_id: result.sessionId,
      created: result.created,
      reply: result.reply,
      silence: result.silence,
    });
    return EXIT.ok;
  }
  if (result.silence === 'no_reply') output.line('(no reply)');
  else if (result.silence === null) output.line(result.reply);
  return EXIT.ok;
}
