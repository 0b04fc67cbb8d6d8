import { statSync } from 'node:fs';
import path from 'node:path';
import type { ApprovalCallback } from '@hermes/agent';
import {
  DEFAULT_PROFILE_NAME,
  getActiveProfileName,
  getDefaultHermesRoot,
  getProfileDir,
  normalizeProfileName,
  readEnvFile,
} from '@hermes/config';
import { RPC_ERROR_CODES, RpcError } from '../contract/error-codes.js';
import type { ProfileRuntimeOptions } from './profile-runtime.js';
import { ProfileRuntime } from './profile-runtime.js';

/**
 * The profiles this bridge serves: the launch profile (its home, the process environment) and,
 * on request, any other profile under the same root with its own `.env` kept out of
 * `process.env`.
 */
export class ProfileRegistry {
  readonly launch: ProfileRuntime;
  readonly root: string;
  readonly #approve: ApprovalCallback;
  readonly #warn: (message: string) => void;
  readonly #onRegistry: ProfileRuntimeOptions['onRegistry'];
  readonly #runtimes = new Map<string, ProfileRuntime>();

  constructor(options: {
    home: string;
    approve: ApprovalCallback;
    warn: (message: string) => void;
    onRegistry?: ProfileRuntimeOptions['onRegistry'];
  }) {
    this.root = path.resolve(getDefaultHermesRoot());
    this.#approve = options.approve;
    this.#warn = options.warn;
    this.#onRegistry = options.onRegistry;
    const home = path.resolve(options.home);
    this.launch = new ProfileRuntime({
      name: getActiveProfileName(home),
      home,
      secrets: undefined,
      approve: this.#approve,
      warn: this.#warn,
      ...(this.#onRegistry ? { onRegistry: this.#onRegistry } : {}),
    });
    this.#runtimes.set(this.launch.name, this.launch);
  }

  /** The runtime for `name` (default: the launch profile); 4003 for a name that is not a profile. */
  resolve(name: string | undefined): ProfileRuntime {
    if (name === undefined) return this.launch;
    const normalized = normalizeProfileName(name);
    const existing = this.#runtimes.get(normalized);
    if (existing) return existing;
    let home: string;
    try {
      home = getProfileDir(normalized, this.root);
    } catch (error) {
      throw new RpcError(
        RPC_ERROR_CODES.profileNotFound,
        error instanceof Error ? error.message : String(error),
      );
    }
    if (normalized !== DEFAULT_PROFILE_NAME) {
      let isDirectory = false;
      try {
        isDirectory = statSync(home).isDirectory();
      } catch {
        isDirectory = false;
      }
      if (!isDirectory)
        throw new RpcError(RPC_ERROR_CODES.profileNotFound, `profile not found: ${normalized}`);
    }
    if (path.resolve(home) === this.launch.home) return this.launch;
    const runtime = new ProfileRuntime({
      name: normalized,
      home,
      secrets: readEnvFile(home),
      approve: this.#approve,
      warn: this.#warn,
      ...(this.#onRegistry ? { onRegistry: this.#onRegistry } : {}),
    });
    this.#runtimes.set(normalized, runtime);
    return runtime;
  }

  runtimes(): ProfileRuntime[] {
    return [...this.#runtimes.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.runtimes().map((runtime) => runtime.close()));
  }
}
