export * as ConfigDefaults from "./config-defaults.ts";
export * as Config from "./config.ts";
export * as ConfigParser from "./config-parse.ts";
