import { type ConfigReader, createConfigReader, getHermesHome } from '@hermes/config';

/** The two `browser.extension_control` flags, each true only for a literal `true` in config. */
export interface ExtensionControlFlags {
  readonly enabled: boolean;
  readonly developerMode: boolean;
}

/** Reads the flags live; called on every registration, upgrade, selection and routed tool call. */
export type ExtensionControlFlagSource = () => ExtensionControlFlags;

const OFF: ExtensionControlFlags = Object.freeze({ enabled: false, developerMode: false });

/**
 * Flags from a `@hermes/config` reader. The reader re-parses only when config.yaml changed, so this
 * is cheap enough for the hot path; any failure (invalid YAML, unreadable home) reads as off.
 */
export function flagsFromConfigReader(reader: ConfigReader): ExtensionControlFlagSource {
  return () => {
    try {
      return reader.read().config.browser.extensionControl;
    } catch {
      return OFF;
    }
  };
}

const readersByHome = new Map<string, ConfigReader>();

/**
 * Flags of the current home (`getHermesHome()`, so a per-task home override is honoured), through
 * one cached reader per home. Used when nothing more specific was injected.
 */
export const liveExtensionControlFlags: ExtensionControlFlagSource = () => {
  try {
    const home = getHermesHome();
    let reader = readersByHome.get(home);
    if (!reader) {
      reader = createConfigReader({ home });
      readersByHome.set(home, reader);
    }
    return reader.read().config.browser.extensionControl;
  } catch {
    return OFF;
  }
};

/** Reads the flags from a source, turning any throw into "off" (fail closed). */
export function readFlags(source: ExtensionControlFlagSource): ExtensionControlFlags {
  try {
    const flags = source();
    return { enabled: flags.enabled === true, developerMode: flags.developerMode === true };
  } catch {
    return OFF;
  }
}
