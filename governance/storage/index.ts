export * as AtomicWrite from "./atomic-write.ts";
export * as AuditLog from "./audit-log.ts";
export * as FileLock from "./file-lock.ts";
export * as GovernancePaths from "./governance-paths.ts";
export * as Quarantine from "./quarantine.ts";
export * as DirectiveSigning from "./directive-signing.ts";
export * as SafeFs from "./safe-fs.ts";
export * as StateHealth from "./state-health.ts";
