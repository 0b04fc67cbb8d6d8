import { seededRandom } from '@hermes/testkit';
import { fromPlain, JsonObject, type JsonText, RawJson } from './json-text.js';

/** Draws from a seeded PRNG: the same seed makes the same requests. */
export class Dice {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = seededRandom(seed);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.#next() * n);
  }

  chance(p: number): boolean {
    return this.#next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)] as T;
  }
}

export const DEEP_LEVELS = 10_000;

/** `[[[…]]]` and `{"a":{"a":…}}`, `levels` deep, as raw text (no recursion to build or send). */
export function deepArray(levels: number): RawJson {
  return new RawJson(`${'['.repeat(levels)}${']'.repeat(levels)}`);
}

export function deepObject(levels: number): RawJson {
  return new RawJson(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
}

/** Strings a validator must not trip on: numbers in disguise, controls, surrogates, lengths. */
function weirdString(dice: Dice): JsonText {
  return dice.pick<() => JsonText>([
    () => '',
    () => ' ',
    () => '\t\n ',
    () => 'NaN',
    () => 'Infinity',
    () => '-0',
    () => '1e309',
    () => '0x10',
    () => '123456789012345678901234567890',
    () => 'null',
    () => 'true',
    () => '__proto__',
    () => 'constructor',
    () => '../../etc/passwd',
    () => '%00%ZZ',
    () => 'a\u0000b',
    () => '\u202Eevil\u202C',
    () => '\u200B',
    () => '😀'.repeat(dice.int(200) + 1),
    () => 'x'.repeat(dice.pick([101, 129, 257, 4097, 70_000])),
    () => new RawJson('"\\ud800"'),
    () => new RawJson('"tail\\udc00"'),
    () => new RawJson('"\\udbff\\udbff"'),
    () => new RawJson('"\\u0000"'),
    () => '/help',
    () => '/version',
    () => '/title fuzzed',
    () => `/title ${'t'.repeat(150)}`,
    () => new RawJson('"/title \\ud800"'),
    () => '/title \u0000\u202E',
    () => '/stop',
    () => '/status',
    () => '/usage',
    () => '/help me',
    () => '/nosuchcommand',
    () => '/',
    () => 'api_1_deadbeef',
    () => 'resp_unknown',
  ])();
}

function weirdNumber(dice: Dice): JsonText {
  return dice.pick<JsonText>([
    0,
    -1,
    1,
    1.5,
    -1.5,
    2 ** 31,
    2 ** 53 + 2,
    new RawJson('-0'),
    new RawJson('1e309'),
    new RawJson('-1e309'),
    new RawJson('1e-400'),
    new RawJson('123456789012345678901234567890'),
    new RawJson('-123456789012345678901234567890'),
    new RawJson('0.000000000000000000000000001'),
  ]);
}

/** Objects with keys that reach for the prototype, and other odd shapes. */
function weirdObject(dice: Dice): JsonText {
  return dice.pick<() => JsonText>([
    () => new JsonObject([]),
    () => new JsonObject([['__proto__', new JsonObject([['polluted', true]])]]),
    () =>
      new JsonObject([
        ['constructor', new JsonObject([['prototype', new JsonObject([['polluted', true]])]])],
      ]),
    () => new JsonObject([['toString', 1]]),
    () => new JsonObject([['hasOwnProperty', 'x']]),
    () => new JsonObject([['', null]]),
    () => fromPlain({ type: 'text', text: 'hi' }),
    () => fromPlain({ role: 'user', content: 'hi' }),
    () => deepObject(DEEP_LEVELS),
    () => deepObject(63),
  ])();
}

function weirdArray(dice: Dice): JsonText {
  return dice.pick<() => JsonText>([
    () => [],
    () => [null],
    () => [1, 'a', null, true],
    () => ['hi'],
    () => Array.from({ length: 2000 }, () => 0),
    () => [new JsonObject([])],
    () => deepArray(DEEP_LEVELS),
    () => deepArray(63),
  ])();
}

/** A value of some other type (or an odd value of the same one) to put where a field was. */
export function weirdValue(dice: Dice): JsonText {
  const kind = dice.int(10);
  if (kind === 0) return null;
  if (kind === 1) return dice.chance(0.5);
  if (kind <= 3) return weirdNumber(dice);
  if (kind <= 6) return weirdString(dice);
  if (kind <= 8) return weirdObject(dice);
  return weirdArray(dice);
}

/** Keys added to an object besides its own. */
export function unknownKey(dice: Dice): string {
  return dice.pick([
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'x_unknown',
    '',
    '😀',
    'a'.repeat(1000),
    'session_id',
    'id',
  ]);
}
