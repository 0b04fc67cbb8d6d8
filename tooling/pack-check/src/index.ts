export { type CheckOptions, type CheckResult, checkPackages, type PackageReport } from './check.js';
