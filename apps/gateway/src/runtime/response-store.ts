/** How many stored `/v1/responses` a profile keeps (the reference's `MAX_STORED_RESPONSES`). */
export const MAX_STORED_RESPONSES = 100;

export interface StoredResponse {
  readonly id: string;
  readonly profile: string;
  /** The session the response's turn ran in (its compression tip at the end of the turn). */
  readonly sessionId: string;
  /** The last stored message of the turn: a chained request continues from here. */
  readonly lastMessageId: number | null;
  readonly body: Record<string, unknown>;
}

/**
 * Stored responses for `GET|DELETE /v1/responses/:id` and `previous_response_id`, per profile,
 * least recently used dropped past `MAX_STORED_RESPONSES`. The conversation itself lives in the
 * session store; this only maps a response id to where it ended.
 */
export class ResponseStore {
  readonly #byProfile = new Map<string, Map<string, StoredResponse>>();
  readonly #capacity: number;

  constructor(capacity = MAX_STORED_RESPONSES) {
    this.#capacity = capacity;
  }

  #map(profile: string): Map<string, StoredResponse> {
    let map = this.#byProfile.get(profile);
    if (!map) {
      map = new Map();
      this.#byProfile.set(profile, map);
    }
    return map;
  }

  put(response: StoredResponse): void {
    const map = this.#map(response.profile);
    map.delete(response.id);
    map.set(response.id, response);
    while (map.size > this.#capacity) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }

  get(profile: string, id: string): StoredResponse | undefined {
    const map = this.#byProfile.get(profile);
    const found = map?.get(id);
    if (found && map) {
      map.delete(id);
      map.set(id, found);
    }
    return found;
  }

  delete(profile: string, id: string): boolean {
    return this.#byProfile.get(profile)?.delete(id) ?? false;
  }
}
