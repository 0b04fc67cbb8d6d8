export {
  ACTIVE_PROFILE_FILE,
  deleteProfile,
  getActiveProfilePath,
  type ProfileSelection,
  readActiveProfile,
  selectProfileHome,
  setActiveProfile,
} from './active-profile.js';
export type {
  AgentConfig,
  ApprovalMode,
  ApprovalsConfig,
  CompressionConfig,
  CustomProviderConfig,
  FallbackProviderConfig,
  ModelSettingsConfig,
  ProviderConfig,
  TerminalConfig,
} from './agent-config-types.js';
export * from './agent-defaults.js';
export { type AtomicWriteOptions, writeFileAtomic, writeFileAtomicSync } from './atomic-write.js';
export {
  coerceBoolean,
  coerceInteger,
  coerceNumber,
  coerceString,
  type NumberRange,
  parseBooleanToken,
} from './coerce.js';
export {
  CONFIG_BACKUP_COUNT,
  CONFIG_FILE_NAME,
  type ConfigDocument,
  configSetKey,
  getConfigPath,
  parseConfigKey,
  parseConfigText,
  readConfigData,
  readConfigDocument,
  setConfigValue,
  writeConfigDocument,
} from './config-file.js';
export { type ConfigReader, createConfigReader } from './config-reader.js';
export type {
  ApiServerConfig,
  AuxiliaryConfig,
  AuxiliaryTaskConfig,
  BrowserConfig,
  DelegationConfig,
  GatewayConfig,
  HermesConfig,
  ModelConfig,
  PlatformConfig,
} from './config-types.js';
export * from './defaults.js';
export { applyEnvFile, getEnvFilePath, readEnvFile } from './dotenv.js';
export { ENV_NAME_PATTERN, setEnvValue, setEnvValues } from './env-file-edit.js';
export { type ConfigErrorCode, ConfigParseError, HermesConfigError } from './errors.js';
export {
  type EnvBooleanOverride,
  readEnvBoolean,
  readGatewayBoolean,
  readGatewayKey,
} from './gateway-keys.js';
export {
  expandUserHome,
  getDefaultHermesRoot,
  getHermesHome,
  getHomeOverride,
  getHomeScope,
  getPlatformDefaultHome,
  getProcessHermesHome,
  getSecret,
  type HomeScope,
  resolveHomePath,
  withHome,
  withHomeScope,
} from './home.js';
export {
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  resolveConfig,
} from './load-config.js';
export {
  createProfile,
  DEFAULT_PROFILE_NAME,
  getActiveProfileName,
  getProfileDir,
  getProfilesRoot,
  listProfiles,
  normalizeProfileName,
  PARKED_MARKER_FILE,
  PROFILE_NAME_PATTERN,
  PROFILE_SUBDIRECTORIES,
  type ProfileInfo,
  profileMatchesHome,
  RESERVED_PROFILE_NAMES,
  validateProfileName,
} from './profiles.js';
export { resolveBrowserConfig, resolveGatewayConfig } from './resolve-gateway.js';
export { resolveFallbackProviders } from './resolve-providers.js';
export * from './restart-drain.js';
