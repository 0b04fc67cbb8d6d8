/**
 * Who a controller is (six identity strings) plus what it negotiated (capabilities, not identity).
 * Scopes are immutable values; compare them with `sameIdentity` / `sameScope`, never with `===`.
 */
export interface ControllerScope {
  readonly principalId: string | null;
  readonly profileId: string | null;
  readonly sessionId: string | null;
  readonly controllerId: string | null;
  readonly browserProfileId: string | null;
  readonly transportFamily: string | null;
  readonly capabilities: ReadonlySet<string>;
}

export interface ControllerScopeInput {
  readonly principalId?: string | null | undefined;
  readonly profileId?: string | null | undefined;
  readonly sessionId?: string | null | undefined;
  readonly controllerId?: string | null | undefined;
  readonly browserProfileId?: string | null | undefined;
  readonly transportFamily?: string | null | undefined;
  readonly capabilities?: Iterable<string> | undefined;
}

/**
 * A capability set that cannot change after construction. `Object.freeze` does not stop
 * `Set.prototype.add` (a Set's entries are internal slots, not properties), so the entries live in
 * a private field and the class has no mutators: `.add()` does not exist, and
 * `Set.prototype.add.call(set, …)` throws because this is not a Set.
 */
class CapabilitySet implements ReadonlySet<string> {
  readonly #entries: Set<string>;

  constructor(entries: Iterable<string>) {
    this.#entries = new Set(entries);
    Object.freeze(this);
  }

  get size(): number {
    return this.#entries.size;
  }

  has(value: string): boolean {
    return this.#entries.has(value);
  }

  forEach(
    callback: (value: string, key: string, set: ReadonlySet<string>) => void,
    thisArg?: unknown,
  ): void {
    for (const value of this.#entries) callback.call(thisArg, value, value, this);
  }

  entries(): SetIterator<[string, string]> {
    return this.#entries.entries();
  }

  keys(): SetIterator<string> {
    return this.#entries.keys();
  }

  values(): SetIterator<string> {
    return this.#entries.values();
  }

  [Symbol.iterator](): SetIterator<string> {
    return this.#entries.values();
  }

  get [Symbol.toStringTag](): string {
    return 'CapabilitySet';
  }
}

/** Scopes this module built: frozen all the way down, safe to keep and to hand out. */
const immutableScopes = new WeakSet<ControllerScope>();

/**
 * Builds an immutable scope; absent identity fields become `null`. The object is frozen and its
 * capability set has no mutators, so a scope can be stored and handed out without copies.
 */
export function createScope(input: ControllerScopeInput): ControllerScope {
  const scope: ControllerScope = Object.freeze({
    principalId: input.principalId ?? null,
    profileId: input.profileId ?? null,
    sessionId: input.sessionId ?? null,
    controllerId: input.controllerId ?? null,
    browserProfileId: input.browserProfileId ?? null,
    transportFamily: input.transportFamily ?? null,
    capabilities: new CapabilitySet(input.capabilities ?? []),
  });
  immutableScopes.add(scope);
  return scope;
}

/**
 * `scope` itself when `createScope` built it, else an immutable copy. Whatever the broker keeps
 * goes through this: a caller's own object (a plain literal with a real `Set`) may change later.
 */
export function toImmutableScope(scope: ControllerScope): ControllerScope {
  return immutableScopes.has(scope) ? scope : createScope(scope);
}

/** Returns a copy of `scope` with other capabilities (identity unchanged). */
export function withCapabilities(
  scope: ControllerScope,
  capabilities: Iterable<string>,
): ControllerScope {
  return createScope({ ...scope, capabilities });
}

// Immutable scopes' keys are computed once (they sit on every dispatch and result); a caller's
// own (possibly mutable) object is keyed afresh each time.
const identityKeys = new WeakMap<ControllerScope, string>();
const scopeKeys = new WeakMap<ControllerScope, string>();

/** Key over the six identity fields. JSON of an array keeps null distinct from "null". */
export function identityKey(scope: ControllerScope): string {
  let key = identityKeys.get(scope);
  if (key === undefined) {
    key = JSON.stringify([
      scope.principalId,
      scope.profileId,
      scope.sessionId,
      scope.controllerId,
      scope.browserProfileId,
      scope.transportFamily,
    ]);
    if (immutableScopes.has(scope)) identityKeys.set(scope, key);
  }
  return key;
}

/** Canonical key over all seven fields (capabilities sorted): two scopes differing only in capabilities differ. */
export function scopeKey(scope: ControllerScope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) {
    key = `${identityKey(scope)}${JSON.stringify([...scope.capabilities].sort())}`;
    if (immutableScopes.has(scope)) scopeKeys.set(scope, key);
  }
  return key;
}

/** Key of the lane a new identity hard-replaces: principal, profile, session, transport family. */
export function replacementLaneKey(scope: ControllerScope): string {
  return JSON.stringify([
    scope.principalId,
    scope.profileId,
    scope.sessionId,
    scope.transportFamily,
  ]);
}

/** Equal on the six identity fields, capabilities ignored. */
export function sameIdentity(left: ControllerScope, right: ControllerScope): boolean {
  return identityKey(left) === identityKey(right);
}

/** Equal on all seven fields. */
export function sameScope(left: ControllerScope, right: ControllerScope): boolean {
  return scopeKey(left) === scopeKey(right);
}

/** The wire form of a scope (snake_case, capabilities sorted), as returned by registration. */
export interface WireScope {
  principal_id: string | null;
  profile_id: string | null;
  session_id: string | null;
  controller_id: string | null;
  browser_profile_id: string | null;
  transport_family: string | null;
  capabilities: string[];
}

export function scopeToWire(scope: ControllerScope): WireScope {
  return {
    principal_id: scope.principalId,
    profile_id: scope.profileId,
    session_id: scope.sessionId,
    controller_id: scope.controllerId,
    browser_profile_id: scope.browserProfileId,
    transport_family: scope.transportFamily,
    capabilities: [...scope.capabilities].sort(),
  };
}
