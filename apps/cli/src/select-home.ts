// What the bootstrap (bin.ts) needs from @hermes/config, named: a dynamic import of the whole package
// would make every export (and the YAML parser behind loadConfig) part of every command's start.
export { getPlatformDefaultHome, HermesConfigError, selectProfileHome } from '@hermes/config';
