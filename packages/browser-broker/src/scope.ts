/**
 * Who a controller is (six identity strings) plus what it negotiated (capabilities, not identity).
 * Scopes are frozen values; compare them with `sameIdentity` / `sameScope`, never with `===`.
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

/** Builds an immutable scope; absent identity fields become `null`. */
export function createScope(input: ControllerScopeInput): ControllerScope {
  const capabilities = new Set(input.capabilities ?? []);
  return Object.freeze({
    principalId: input.principalId ?? null,
    profileId: input.profileId ?? null,
    sessionId: input.sessionId ?? null,
    controllerId: input.controllerId ?? null,
    browserProfileId: input.browserProfileId ?? null,
    transportFamily: input.transportFamily ?? null,
    capabilities: Object.freeze(capabilities) as ReadonlySet<string>,
  });
}

/** Returns a copy of `scope` with other capabilities (identity unchanged). */
export function withCapabilities(
  scope: ControllerScope,
  capabilities: Iterable<string>,
): ControllerScope {
  return createScope({ ...scope, capabilities });
}

// Scopes are frozen, so their keys are computed once (they sit on every dispatch and result).
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
    if (Object.isFrozen(scope)) identityKeys.set(scope, key);
  }
  return key;
}

/** Canonical key over all seven fields (capabilities sorted): two scopes differing only in capabilities differ. */
export function scopeKey(scope: ControllerScope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) {
    key = `${identityKey(scope)}${JSON.stringify([...scope.capabilities].sort())}`;
    if (Object.isFrozen(scope)) scopeKeys.set(scope, key);
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
