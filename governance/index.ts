/** The governance core, one folder per concern; each folder's index is its public face. */
export * from "./session/index.ts";
export * from "./delegation/index.ts";
export * from "./stop/index.ts";
export * from "./storage/index.ts";
export * from "./config/index.ts";
export * from "./time/index.ts";
export * as Texts from "./texts/index.ts";
export { InjectSanitizer } from "./texts/index.ts";
